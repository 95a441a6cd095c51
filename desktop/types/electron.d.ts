/**
 * The part of Electron's API the shell uses, declared by hand so that the root `tsc -p .` checks
 * desktop/ without the `electron` package (its install downloads a binary the default install must not
 * need). Signatures follow Electron's own typings; with `electron` installed in desktop/,
 * `npm run typecheck --prefix desktop` checks against the real ones instead (desktop/tsconfig.json).
 */
declare module "electron" {
  interface ElectronEvent {
    preventDefault(): void;
  }

  interface App {
    requestSingleInstanceLock(): boolean;
    enableSandbox(): void;
    whenReady(): Promise<void>;
    quit(): void;
    getPath(name: "userData" | "logs" | "temp" | "home"): string;
    getVersion(): string;
    getAppPath(): string;
    readonly isPackaged: boolean;
    on(event: "second-instance", listener: (event: ElectronEvent, argv: string[], cwd: string) => void): this;
    on(event: "web-contents-created", listener: (event: ElectronEvent, contents: WebContents) => void): this;
    on(event: "window-all-closed", listener: () => void): this;
    on(event: "before-quit", listener: (event: ElectronEvent) => void): this;
  }

  interface HandlerDetails {
    url: string;
  }

  interface WebContents {
    on(event: "will-navigate" | "will-redirect", listener: (event: ElectronEvent, url: string) => void): this;
    on(event: "will-attach-webview", listener: (event: ElectronEvent) => void): this;
    setWindowOpenHandler(
      handler: (details: HandlerDetails) => { action: "deny" } | { action: "allow" },
    ): void;
    loadURL(url: string): Promise<void>;
  }

  interface WebPreferences {
    preload?: string;
    contextIsolation?: boolean;
    sandbox?: boolean;
    nodeIntegration?: boolean;
    webviewTag?: boolean;
  }

  interface BrowserWindowConstructorOptions {
    width?: number;
    height?: number;
    title?: string;
    show?: boolean;
    webPreferences?: WebPreferences;
  }

  class BrowserWindow {
    constructor(options?: BrowserWindowConstructorOptions);
    readonly webContents: WebContents;
    loadURL(url: string): Promise<void>;
    once(event: "ready-to-show", listener: () => void): this;
    isDestroyed(): boolean;
    isMinimized(): boolean;
    restore(): void;
    show(): void;
    focus(): void;
  }

  interface MessageBoxOptions {
    message: string;
    type?: "none" | "info" | "error" | "question" | "warning";
    title?: string;
    detail?: string;
    buttons?: string[];
    defaultId?: number;
    cancelId?: number;
  }

  interface MessageBoxReturnValue {
    response: number;
    checkboxChecked: boolean;
  }

  interface Dialog {
    showMessageBox(options: MessageBoxOptions): Promise<MessageBoxReturnValue>;
  }

  interface CookiesSetDetails {
    url: string;
    name?: string;
    value?: string;
    path?: string;
    secure?: boolean;
    httpOnly?: boolean;
    expirationDate?: number;
    sameSite?: "unspecified" | "no_restriction" | "lax" | "strict";
  }

  interface Session {
    readonly cookies: { set(details: CookiesSetDetails): Promise<void> };
    setPermissionRequestHandler(
      handler:
        | ((contents: WebContents, permission: string, callback: (granted: boolean) => void) => void)
        | null,
    ): void;
  }

  interface WebFrameMain {
    readonly url: string;
  }

  interface IpcMainInvokeEvent extends ElectronEvent {
    readonly senderFrame: WebFrameMain | null;
  }

  interface IpcMain {
    handle(channel: string, listener: (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown): void;
  }

  interface IpcRenderer {
    invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  }

  interface ContextBridge {
    exposeInMainWorld(apiKey: string, api: unknown): void;
  }

  interface Shell {
    openExternal(url: string): Promise<void>;
    openPath(path: string): Promise<string>;
  }

  export const app: App;
  export const dialog: Dialog;
  export const ipcMain: IpcMain;
  export const ipcRenderer: IpcRenderer;
  export const contextBridge: ContextBridge;
  export const shell: Shell;
  export const session: { readonly defaultSession: Session };
  export type { IpcMainInvokeEvent, WebContents };
  export { BrowserWindow };
}
