/**
 * A recording stand-in for the part of Electron's API desktop/main.ts uses, so the shell's main process
 * runs under `bun test` (Electron's binary cannot be downloaded here) against the real supervisor and
 * the real server. It behaves as Electron documents: `app.quit()` emits a preventable "before-quit",
 * every new window's web contents is announced with "web-contents-created", dialogs answer from a script.
 */
import { EventEmitter } from "node:events";

export interface RecordedEvent {
  prevented: boolean;
  preventDefault(): void;
}

const event = (): RecordedEvent => ({
  prevented: false,
  preventDefault() {
    this.prevented = true;
  },
});

type OpenHandler = (details: { url: string }) => { action: string };

export class FakeWebContents extends EventEmitter {
  loaded: string[] = [];
  openHandler: OpenHandler | undefined;

  setWindowOpenHandler(handler: OpenHandler): void {
    this.openHandler = handler;
  }

  async loadURL(url: string): Promise<void> {
    this.loaded.push(url);
  }

  /** Emits a navigation event as Electron does; true when the shell prevented it. */
  attempt(name: "will-navigate" | "will-redirect" | "will-attach-webview", url = ""): boolean {
    const e = event();
    this.emit(name, e, url);
    return e.prevented;
  }
}

export class FakeElectron {
  lock = true;
  sandboxedAll = false;
  quitRequests = 0;
  quit = false;
  readonly appEvents = new EventEmitter();
  readonly windows: FakeWindow[] = [];
  readonly cookies: Record<string, unknown>[] = [];
  readonly ipc = new Map<string, (event: unknown, ...args: unknown[]) => unknown>();
  readonly openedExternal: string[] = [];
  readonly openedPaths: string[] = [];
  readonly dialogs: { message: string; detail?: string; buttons?: string[] }[] = [];
  dialogAnswers: number[] = [];
  permissionHandler:
    | ((contents: unknown, permission: string, callback: (ok: boolean) => void) => void)
    | undefined;

  constructor(
    readonly userData: string,
    readonly appPath: string,
  ) {}

  /** The module object `import ... from "electron"` gets. */
  module() {
    const fake = this;
    class BrowserWindow extends FakeWindow {
      constructor(options: Record<string, unknown>) {
        super(options);
        fake.windows.push(this);
        fake.appEvents.emit("web-contents-created", event(), this.webContents);
      }
    }
    const app = {
      requestSingleInstanceLock: () => fake.lock,
      enableSandbox: () => {
        fake.sandboxedAll = true;
      },
      whenReady: () => Promise.resolve(),
      getPath: (name: string) => (name === "userData" ? fake.userData : `/nonexistent/${name}`),
      getAppPath: () => fake.appPath,
      getVersion: () => "9.8.7",
      isPackaged: false,
      quit() {
        fake.quitRequests++;
        const e = event();
        fake.appEvents.emit("before-quit", e);
        if (!e.prevented) fake.quit = true;
      },
      on(name: string, listener: (...args: unknown[]) => void) {
        fake.appEvents.on(name, listener);
        return app;
      },
    };
    return {
      app,
      BrowserWindow,
      dialog: {
        async showMessageBox(options: { message: string; detail?: string; buttons?: string[] }) {
          fake.dialogs.push(options);
          return { response: fake.dialogAnswers.shift() ?? 0, checkboxChecked: false };
        },
      },
      ipcMain: {
        handle: (channel: string, listener: (event: unknown, ...args: unknown[]) => unknown) =>
          fake.ipc.set(channel, listener),
      },
      session: {
        defaultSession: {
          cookies: {
            set: async (details: Record<string, unknown>) => {
              fake.cookies.push(details);
            },
          },
          setPermissionRequestHandler: (handler: FakeElectron["permissionHandler"]) => {
            fake.permissionHandler = handler;
          },
        },
      },
      shell: {
        openExternal: async (url: string) => {
          fake.openedExternal.push(url);
        },
        openPath: async (path: string) => {
          fake.openedPaths.push(path);
          return "";
        },
      },
    };
  }
}

export class FakeWindow extends EventEmitter {
  readonly webContents = new FakeWebContents();
  minimized = true;
  focused = 0;

  constructor(readonly options: Record<string, unknown>) {
    super();
  }

  get loaded(): string[] {
    return this.webContents.loaded;
  }

  loadURL(url: string): Promise<void> {
    return this.webContents.loadURL(url);
  }
  isDestroyed = () => false;
  isMinimized = () => this.minimized;
  restore = () => {
    this.minimized = false;
  };
  show = () => {};
  focus = () => {
    this.focused++;
  };
}
