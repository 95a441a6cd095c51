/**
 * Electron's main process: one instance, the server started on loopback by the supervisor (data under
 * `userData`, a fresh token per launch, set as a cookie for the server's origin), one locked-down window
 * on `/app/`, a restart prompt when the server crashes, and the server stopped on quit. The window's
 * content is the server's own web UI; it never gets Node (preload.ts is its only bridge).
 */
import { createWriteStream, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  app,
  BrowserWindow,
  dialog,
  type IpcMainInvokeEvent,
  ipcMain,
  session,
  shell,
  type WebContents,
} from "electron";
import { isExternalLink, isServerUrl } from "./navigation.ts";
import {
  type CrashInfo,
  ServerSupervisor,
  SupervisorError,
  serverCommand,
  TOKEN_COOKIE,
} from "./supervisor.ts";

/** The checkout, in development: the nearest folder above this file holding server/main.ts. */
function findRepoRoot(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "server", "main.ts"))) return dir;
  }
  return from;
}

/** The server gets this process's environment minus Electron's own variables. */
function serverEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("ELECTRON_")));
}

/** The last lines of the server's output, short enough for a dialog. */
const tail = (output: string) => output.split("\n").slice(-12).join("\n");

function runShell(): void {
  const userData = app.getPath("userData");
  const dataDir = join(userData, "data");
  const logDir = join(userData, "logs");
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(logDir, { recursive: true });
  const serverLog = createWriteStream(join(logDir, "server.log"), { flags: "a" });

  // desktop/ in development, resources/app.asar when packaged. (Not __dirname: the bundler inlines it.)
  const appDir = app.getAppPath();
  const resourcesPath = (process as NodeJS.Process & { resourcesPath?: string }).resourcesPath ?? "";
  const supervisor = new ServerSupervisor({
    command: serverCommand({
      packaged: app.isPackaged,
      resourcesPath,
      repoRoot: findRepoRoot(appDir),
      dataDir,
      bun: process.env.ATRIUM_BUN,
    }),
    dataDir,
    env: serverEnvironment(),
    onOutput: (line) => serverLog.write(`${line}\n`),
  });

  let window: BrowserWindow | undefined;
  let origin: string | undefined;
  let stopped = false;

  async function launch(): Promise<void> {
    try {
      origin = (await supervisor.start()).origin;
    } catch (error) {
      const output = error instanceof SupervisorError ? error.output : "";
      await offerRetry("Atrium could not start its server.", (error as Error).message, output);
      return;
    }
    // A session cookie: it lives as long as this launch, like the token.
    await session.defaultSession.cookies.set({
      url: origin,
      name: TOKEN_COOKIE,
      value: supervisor.token,
      path: "/",
      httpOnly: true,
      sameSite: "strict",
    });
    if (!window || window.isDestroyed()) window = createWindow();
    await window.loadURL(`${origin}/app/`);
  }

  function createWindow(): BrowserWindow {
    const created = new BrowserWindow({
      width: 1200,
      height: 800,
      title: "Atrium",
      show: false,
      webPreferences: {
        preload: join(appDir, "dist", "preload.cjs"),
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        webviewTag: false,
      },
    });
    created.once("ready-to-show", () => created.show());
    return created;
  }

  /** The visible error window for a failed start: retry, look at the logs, or quit. */
  async function offerRetry(message: string, reason: string, output: string): Promise<void> {
    const { response } = await dialog.showMessageBox({
      type: "error",
      title: "Atrium",
      message,
      detail: `${reason}\n\n${tail(output)}`.trim(),
      buttons: ["Retry", "Open logs folder", "Quit"],
      defaultId: 0,
      cancelId: 2,
    });
    if (response === 0) return launch();
    if (response === 1) await shell.openPath(logDir);
    app.quit();
  }

  async function onCrash(info: CrashInfo): Promise<void> {
    const how = info.signal ? `signal ${info.signal}` : `exit code ${info.code}`;
    const { response } = await dialog.showMessageBox({
      type: "error",
      title: "Atrium",
      message: "The Atrium server stopped unexpectedly.",
      detail: `It ended with ${how}.\n\n${tail(info.output)}`.trim(),
      buttons: ["Restart", "Quit"],
      defaultId: 0,
      cancelId: 1,
    });
    if (response === 0) await launch();
    else app.quit();
  }

  /** Every web contents (the window, anything it might open) stays on the server's origin. */
  function lockDown(contents: WebContents): void {
    contents.on("will-navigate", (event, url) => {
      if (origin && isServerUrl(url, origin)) return;
      event.preventDefault();
      if (isExternalLink(url)) void shell.openExternal(url);
    });
    contents.on("will-redirect", (event, url) => {
      if (!origin || !isServerUrl(url, origin)) event.preventDefault();
    });
    contents.on("will-attach-webview", (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      if (origin && isServerUrl(url, origin)) void contents.loadURL(url);
      else if (isExternalLink(url)) void shell.openExternal(url);
      return { action: "deny" };
    });
  }

  /** IPC is answered only for the server's own pages. */
  function fromServer(event: IpcMainInvokeEvent): boolean {
    const url = event.senderFrame?.url;
    return Boolean(origin && url && isServerUrl(url, origin));
  }

  app.on("second-instance", () => {
    if (!window || window.isDestroyed()) return;
    if (window.isMinimized()) window.restore();
    window.show();
    window.focus();
  });
  app.on("web-contents-created", (_event, contents) => lockDown(contents));
  app.on("window-all-closed", () => app.quit());
  app.on("before-quit", (event) => {
    if (stopped) return;
    event.preventDefault();
    void supervisor.stop().finally(() => {
      stopped = true;
      serverLog.end();
      app.quit();
    });
  });
  // A terminal's Ctrl-C in development, or a service manager's stop: the same clean quit.
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => app.quit());
  process.on("exit", () => supervisor.killNow());
  supervisor.on("crash", (info) => void onCrash(info));

  ipcMain.handle("atrium:version", (event) => (fromServer(event) ? app.getVersion() : undefined));
  ipcMain.handle("atrium:open-external", async (event, url: unknown) => {
    if (fromServer(event) && typeof url === "string" && isExternalLink(url)) await shell.openExternal(url);
  });

  void app.whenReady().then(() => {
    // The UI needs no camera, microphone, notifications or geolocation.
    session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
    return launch();
  });
}

// Every renderer sandboxed, whatever a window's own preferences say (must precede "ready").
app.enableSandbox();
// A second launch hands over to the first (its "second-instance" focuses the window) and exits.
if (app.requestSingleInstanceLock()) runShell();
else app.quit();
