/**
 * The Electron main process (desktop/main.ts) run under `bun test` with a recording stand-in for
 * Electron (fake-electron.ts), the real supervisor and the real server (`bun server/main.ts`, as in
 * `npm run desktop`): single-instance lock, data under userData, the token cookie, the locked-down
 * window on /app/, navigation and new-window rules, IPC, the crash prompt and restart, quitting with no
 * server left, and the error window when the server cannot start.
 */
import { afterAll, afterEach, expect, mock, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TOKEN_COOKIE } from "../../desktop/supervisor.ts";
import { REPO_ROOT } from "../helpers/app.ts";
import { tempDir } from "../helpers/tmp.ts";
import { waitFor } from "../helpers/wait.ts";
import { FakeElectron } from "./fake-electron.ts";

const dir = tempDir("atrium-shell-");
afterAll(() => dir.remove());
const DESKTOP_DIR = join(REPO_ROOT, "desktop");
let launches = 0;

/** Runs a fresh copy of desktop/main.ts against `fake`; returns a cleanup for its process listeners. */
async function launch(fake: FakeElectron): Promise<() => void> {
  const before = new Map((["SIGINT", "SIGTERM", "exit"] as const).map((s) => [s, process.listeners(s)]));
  mock.module("electron", () => fake.module());
  await import(`../../desktop/main.ts?launch=${launches++}`);
  return () => {
    for (const [signal, listeners] of before)
      for (const added of process.listeners(signal).filter((l) => !listeners.includes(l)))
        process.removeListener(signal, added as () => void);
  };
}

/** Waits (up to 15 s) for `probe` to return something truthy. */
const until = <T>(what: string, probe: () => T) =>
  waitFor(probe, { what, timeoutMs: 15_000, intervalMs: 25 });

/** The pid of the server process started with this data dir (Linux: from /proc). */
function serverPid(dataDir: string): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const at = args.indexOf("--data-dir");
      if (at >= 0 && args[at + 1] === dataDir) return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined;
}

let cleanup: (() => void) | undefined;
const dataDirs: string[] = [];
afterEach(() => {
  cleanup?.();
  cleanup = undefined;
  // A failed assertion must not leave a server running (its group is detached from ours).
  for (const dataDir of dataDirs.splice(0)) {
    const pid = serverPid(dataDir);
    if (pid) process.kill(-pid, "SIGKILL");
  }
});

test("launch, lock-down, IPC, crash and restart, quit", async () => {
  const userData = join(dir.path, "user-data");
  const fake = new FakeElectron(userData, DESKTOP_DIR);
  const dataDir = join(userData, "data");
  dataDirs.push(dataDir);
  cleanup = await launch(fake);

  // Started: a window on the server's /app/, with the token cookie set for that origin first.
  const window = await until("the window to load", () =>
    fake.windows[0]?.loaded.length ? fake.windows[0] : undefined,
  );
  const [loaded] = window.loaded;
  const origin = new URL(loaded as string).origin;
  expect(loaded).toBe(`${origin}/app/`);
  expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(existsSync(join(dataDir, "app.db"))).toBe(true);
  expect(fake.cookies).toHaveLength(1);
  const cookie = fake.cookies[0] as { url: string; name: string; value: string };
  expect(cookie).toMatchObject({ url: origin, name: TOKEN_COOKIE, httpOnly: true, sameSite: "strict" });
  expect(cookie).not.toHaveProperty("expirationDate");
  // The server requires exactly that token.
  expect((await fetch(`${origin}/api/sessions`)).status).toBe(401);
  const withCookie = await fetch(`${origin}/api/sessions`, {
    headers: { cookie: `${cookie.name}=${cookie.value}` },
  });
  expect(withCookie.status).not.toBe(401);
  expect(readFileSync(join(userData, "logs", "server.log"), "utf8")).toContain('"msg":"ready"');

  // The window: isolated, sandboxed, no Node, only the preload bridge.
  expect(window.options).toMatchObject({
    webPreferences: {
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webviewTag: false,
      preload: join(DESKTOP_DIR, "dist", "preload.cjs"),
    },
  });
  expect(fake.sandboxedAll).toBe(true);
  let granted: boolean | undefined;
  fake.permissionHandler?.(window.webContents, "media", (ok) => {
    granted = ok;
  });
  expect(granted).toBe(false);

  // Navigation stays on the origin; web links go to the system browser; other schemes nowhere.
  const contents = window.webContents;
  expect(contents.attempt("will-navigate", `${origin}/swagger`)).toBe(false);
  expect(contents.attempt("will-navigate", "https://example.com/docs")).toBe(true);
  expect(contents.attempt("will-navigate", "file:///etc/passwd")).toBe(true);
  expect(contents.attempt("will-navigate", "http://127.0.0.1:1/elsewhere")).toBe(true);
  expect(contents.attempt("will-redirect", "https://example.com/")).toBe(true);
  expect(contents.attempt("will-attach-webview")).toBe(true);
  expect(fake.openedExternal).toEqual(["https://example.com/docs", "http://127.0.0.1:1/elsewhere"]);
  // New windows: always denied; an own-origin link opens in the window, a web link outside.
  expect(contents.openHandler?.({ url: "https://example.org/" })).toEqual({ action: "deny" });
  expect(contents.openHandler?.({ url: `${origin}/swagger` })).toEqual({ action: "deny" });
  expect(contents.openHandler?.({ url: "javascript:alert(1)" })).toEqual({ action: "deny" });
  expect(fake.openedExternal.at(-1)).toBe("https://example.org/");
  expect(contents.loaded.at(-1)).toBe(`${origin}/swagger`);
  expect(fake.windows).toHaveLength(1);

  // IPC answers the server's pages only, and opens only web links.
  const version = fake.ipc.get("atrium:version");
  const openExternal = fake.ipc.get("atrium:open-external");
  expect(await version?.({ senderFrame: { url: `${origin}/app/` } })).toBe("9.8.7");
  expect(await version?.({ senderFrame: { url: "https://evil.example/" } })).toBeUndefined();
  const openedBefore = fake.openedExternal.length;
  await openExternal?.({ senderFrame: { url: `${origin}/app/` } }, "file:///etc/passwd");
  await openExternal?.({ senderFrame: { url: "https://evil.example/" } }, "https://example.net/");
  expect(fake.openedExternal).toHaveLength(openedBefore);
  await openExternal?.({ senderFrame: { url: `${origin}/app/` } }, "https://example.net/");
  expect(fake.openedExternal.at(-1)).toBe("https://example.net/");

  // A second launch focuses this window.
  fake.appEvents.emit("second-instance", {}, [], "/");
  expect(window.focused).toBe(1);
  expect(window.minimized).toBe(false);

  // The server crashes: a restart prompt; "Restart" brings it back and reloads the window.
  const firstPid = serverPid(dataDir) as number;
  expect(firstPid).toBeGreaterThan(0);
  fake.dialogAnswers = [0];
  process.kill(firstPid, "SIGKILL");
  await until("the restart", () => window.loaded.filter((u) => u.endsWith("/app/")).length === 2);
  expect(fake.dialogs[0]).toMatchObject({
    message: "The Atrium server stopped unexpectedly.",
    buttons: ["Restart", "Quit"],
  });
  expect(fake.dialogs[0]?.detail).toContain("signal SIGKILL");
  const secondPid = await until("the new server", () => serverPid(dataDir));
  expect(secondPid).not.toBe(firstPid);
  expect((await fetch(`${new URL(window.loaded.at(-1) as string).origin}/health/ready`)).status).toBe(200);

  // Quit: the first request waits for the server to stop, then the app quits; nothing is left.
  fake.appEvents.emit("window-all-closed");
  await until("the quit", () => fake.quit);
  expect(fake.quitRequests).toBe(2);
  expect(serverPid(dataDir)).toBeUndefined();
  expect(fake.dialogs).toHaveLength(1);
}, 60_000);

test("a second instance quits at once, before starting anything", async () => {
  const fake = new FakeElectron(join(dir.path, "second"), DESKTOP_DIR);
  fake.lock = false;
  cleanup = await launch(fake);
  expect(fake.quit).toBe(true);
  expect(fake.windows).toEqual([]);
  expect(existsSync(join(dir.path, "second"))).toBe(false);
});

test("a server that cannot start: the error window, its logs folder, then quit", async () => {
  const userData = join(dir.path, "broken");
  const fake = new FakeElectron(userData, DESKTOP_DIR);
  fake.dialogAnswers = [0, 1]; // Retry once, then "Open logs folder" (which quits).
  const missing = join(dir.path, "no-bun-here");
  process.env.ATRIUM_BUN = missing;
  try {
    cleanup = await launch(fake);
  } finally {
    delete process.env.ATRIUM_BUN;
  }
  await until("the quit", () => fake.quit);
  expect(fake.dialogs).toHaveLength(2);
  expect(fake.dialogs[0]).toMatchObject({
    message: "Atrium could not start its server.",
    buttons: ["Retry", "Open logs folder", "Quit"],
  });
  expect(fake.dialogs[1]?.detail).toContain(`cannot start ${missing}`);
  expect(fake.openedPaths).toEqual([join(userData, "logs")]);
  expect(fake.windows).toEqual([]);
});
