/**
 * Runs the Atrium server for the desktop shell: picks a free loopback port, spawns the server with the
 * per-launch token, waits for /health/ready, reports a crash, restarts, and stops it (SIGTERM, then
 * SIGKILL after a grace period) leaving no process behind. No Electron here: main.ts wires it to windows
 * and dialogs, and `bun test` drives it against the real server (tests/desktop/supervisor.test.ts).
 * Only Node APIs, because Electron's main process is Node.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { createServer } from "node:net";
import { join } from "node:path";

export const LOOPBACK = "127.0.0.1";
/** The cookie the server reads the launch token from (server/auth/desktop-token.ts; a test checks they match). */
export const TOKEN_COOKIE = "atrium_desktop_token";

/** How to start the server, before the flags the supervisor adds. */
export interface ServerCommand {
  command: string;
  args: string[];
  /** Working directory: the server reads ./config/policy.toml and ./.env from here. */
  cwd: string;
}

export interface CommandOptions {
  /** Electron's `app.isPackaged`. */
  packaged: boolean;
  /** Electron's `process.resourcesPath`, where electron-builder puts `extraResources`. */
  resourcesPath: string;
  /** The checkout, in development. */
  repoRoot: string;
  dataDir: string;
  platform?: NodeJS.Platform;
  /** Overrides the Bun used in development (`ATRIUM_BUN`). */
  bun?: string;
}

/**
 * Packaged: the compiled server in `resources/server/`, run from the data dir (so its built-in policy and
 * a `.env` placed there apply). Development: `bun server/main.ts` from the checkout with the npm-installed Bun.
 */
export function serverCommand(options: CommandOptions): ServerCommand {
  const windows = (options.platform ?? process.platform) === "win32";
  if (options.packaged) {
    const binary = join(options.resourcesPath, "server", windows ? "atrium.exe" : "atrium");
    return { command: binary, args: [], cwd: options.dataDir };
  }
  // The npm package `bun` names its binary bun.exe on every platform.
  const bun = options.bun ?? join(options.repoRoot, "node_modules", "bun", "bin", "bun.exe");
  return { command: bun, args: [join(options.repoRoot, "server", "main.ts")], cwd: options.repoRoot };
}

/** A fresh random token for one launch: 256 bits, URL- and cookie-safe. */
export function createLaunchToken(): string {
  return randomBytes(32).toString("base64url");
}

/** A port that was free on loopback a moment ago (the supervisor retries if another process takes it). */
export function findFreePort(host = LOOPBACK): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once("error", reject);
    probe.listen({ host, port: 0, exclusive: true }, () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error("no port assigned"))));
    });
  });
}

export interface SupervisorOptions {
  command: ServerCommand;
  dataDir: string;
  /** The environment the server gets, plus APP_DESKTOP_TOKEN (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Default: a fresh one (createLaunchToken). Kept across restarts, so the window's cookie stays valid. */
  token?: string;
  /** The port to try first (default: a free one). Taken by another process, a free one is used. */
  preferredPort?: number;
  /** How long the server may take to answer /health/ready (default 30 s). */
  readyTimeoutMs?: number;
  /** How long it may take to stop after SIGTERM before it is killed (default 5 s). */
  graceMs?: number;
  /** Every line the server prints (its JSON log on stderr). */
  onOutput?: (line: string, stream: "stdout" | "stderr") => void;
}

export interface RunningServer {
  /** `http://127.0.0.1:PORT`: the origin the window is locked to. */
  origin: string;
  port: number;
  pid: number;
}

export interface CrashInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines the server printed, for the restart prompt. */
  output: string;
}

/** Startup failed; `output` holds the server's last lines for the error window. */
export class SupervisorError extends Error {
  override name = "SupervisorError";
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message);
  }
}

const OUTPUT_LINES = 40;
const PORT_ATTEMPTS = 3;
const POLL_MS = 100;

/** One server process at a time, started, watched, restarted and stopped on request. */
export class ServerSupervisor extends EventEmitter<{ crash: [CrashInfo] }> {
  readonly token: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private current: RunningServer | undefined;
  private stopping = false;
  private lastPort: number | undefined;
  private output: string[] = [];

  constructor(private readonly options: SupervisorOptions) {
    super();
    this.token = options.token ?? createLaunchToken();
  }

  /** The server while it runs (after start() resolved, until it stops or crashes). */
  get running(): RunningServer | undefined {
    return this.current;
  }

  /** The server's last lines, newest last. */
  get recentOutput(): string {
    return this.output.join("\n");
  }

  /** Starts the server and resolves once /health/ready answers 200; throws SupervisorError otherwise. */
  async start(): Promise<RunningServer> {
    if (this.child) throw new Error("the server is already running");
    this.stopping = false;
    const timeout = this.options.readyTimeoutMs ?? 30_000;
    const deadline = Date.now() + timeout;
    for (let attempt = 1; ; attempt++) {
      // A restart keeps the port when it can, so the window's URL stays the same.
      const preferred = this.lastPort ?? this.options.preferredPort;
      const port = attempt === 1 && preferred ? preferred : await findFreePort();
      const listening = await orLate(this.spawnOn(port), deadline - Date.now());
      if (listening === "late") await this.failLate(timeout);
      if (listening === "listening") break;
      if (listening === "port-taken" && attempt < PORT_ATTEMPTS) continue;
      throw new SupervisorError(
        listening === "port-taken"
          ? `no free port after ${PORT_ATTEMPTS} attempts`
          : `the server exited during startup (${listening})`,
        this.recentOutput,
      );
    }
    const port = this.lastPort as number;
    const origin = `http://${LOOPBACK}:${port}`;
    await this.waitReady(origin, deadline, timeout);
    // (A cast: TypeScript keeps the narrowing of the check at the top across the awaits.)
    const pid = (this.child as ChildProcess | undefined)?.pid as number;
    this.current = { origin, port, pid };
    return this.current;
  }

  /** Stops the server: SIGTERM, SIGKILL after the grace period, and nothing of it left running. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.stopping = true;
    this.current = undefined;
    signalTree(child, "SIGTERM");
    const grace = this.options.graceMs ?? 5_000;
    if ((await orLate(this.exited, grace)) === "late") signalTree(child, "SIGKILL");
    await this.exited;
  }

  /**
   * Last resort when the shell itself is exiting without a clean stop (an uncaught error): kills the
   * server's process group at once. Synchronous, so it works in a `process.on("exit")` handler.
   */
  killNow(): void {
    if (!this.child) return;
    this.stopping = true;
    signalTree(this.child, "SIGKILL");
  }

  /** Stops the server if it runs (or what is left of a crashed one) and starts it again. */
  async restart(): Promise<RunningServer> {
    await this.stop();
    return this.start();
  }

  /** Spawns the server on `port`; resolves when it prints its listening line or exits first. */
  private spawnOn(port: number): Promise<"listening" | "port-taken" | string> {
    const { command, dataDir, env = process.env } = this.options;
    this.output = [];
    const child = spawn(
      command.command,
      [...command.args, "--host", LOOPBACK, "--port", String(port), "--data-dir", dataDir],
      {
        cwd: command.cwd,
        // stdin stays open while we live: the server stops when it closes (we died, even by SIGKILL).
        env: { ...env, APP_DESKTOP_TOKEN: this.token, APP_EXIT_WITH_STDIN: "1" },
        stdio: ["pipe", "pipe", "pipe"],
        // Its own process group on POSIX, so stopping it reaches whatever it started (sandbox workers).
        detached: process.platform !== "win32",
        windowsHide: true,
      },
    );
    this.child = child;
    this.lastPort = port;
    const expected = `listening on http://${LOOPBACK}:${port}`;

    return new Promise((resolve) => {
      let settled = false;
      const settle = (value: string) => {
        if (!settled) resolve(value);
        settled = true;
      };
      this.readLines(child, "stdout", (line) => {
        if (line.trim() === expected) settle("listening");
      });
      this.readLines(child, "stderr");
      this.exited = new Promise((done) => {
        child.once("error", (error) => {
          this.remember(`cannot start ${command.command}: ${error.message}`);
          this.onExit(child, null, null);
          settle(`cannot start ${command.command}: ${error.message}`);
          done();
        });
        child.once("exit", (code, signal) => {
          this.onExit(child, code, signal);
          const taken = this.recentOutput.includes("is already in use");
          settle(taken ? "port-taken" : `exit code ${code ?? signal}`);
          done();
        });
      });
    });
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    // The group may outlive its leader; nothing of it stays behind.
    signalTree(child, "SIGKILL");
    this.child = undefined;
    const wasRunning = this.current !== undefined;
    this.current = undefined;
    if (wasRunning && !this.stopping) this.emit("crash", { code, signal, output: this.recentOutput });
  }

  private async waitReady(origin: string, deadline: number, timeout: number): Promise<void> {
    const child = this.child;
    while (Date.now() < deadline) {
      if (this.child !== child || !child) {
        throw new SupervisorError("the server exited before it was ready", this.recentOutput);
      }
      const ready = await fetch(`${origin}/health/ready`, {
        headers: { authorization: `Bearer ${this.token}` },
        signal: AbortSignal.timeout(2_000),
      }).then(
        async (response) => {
          await response.body?.cancel();
          return response.status === 200;
        },
        () => false,
      );
      if (ready) return;
      await delay(POLL_MS);
    }
    await this.failLate(timeout);
  }

  /** Startup took too long: stop what there is and report it. */
  private async failLate(timeout: number): Promise<never> {
    await this.stop();
    throw new SupervisorError(
      `the server was not ready within ${Math.round(timeout / 1000)} s`,
      this.recentOutput,
    );
  }

  private readLines(child: ChildProcess, stream: "stdout" | "stderr", onLine?: (line: string) => void): void {
    let partial = "";
    child[stream]?.setEncoding("utf8");
    child[stream]?.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        this.remember(line);
        this.options.onOutput?.(line, stream);
        onLine?.(line);
      }
    });
  }

  private remember(line: string): void {
    this.output.push(line);
    if (this.output.length > OUTPUT_LINES) this.output.shift();
  }
}

/**
 * Signals the child's whole process group on POSIX; gone is fine. Windows has no signals: any "signal"
 * terminates at once, so the tree is ended with taskkill /T.
 */
function signalTree(child: ChildProcess, signal: NodeJS.Signals): void {
  if (!child.pid) return;
  if (process.platform === "win32") {
    spawn("taskkill", ["/pid", String(child.pid), "/T", "/F"], { stdio: "ignore", windowsHide: true }).on(
      "error",
      () => child.kill(),
    );
    return;
  }
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: nothing left to signal.
  }
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The promise's value, or "late" when it takes longer than `ms`; the timer is cleared either way. */
async function orLate<T>(promise: Promise<T>, ms: number): Promise<T | "late"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
