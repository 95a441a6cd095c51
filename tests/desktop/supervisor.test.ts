/**
 * The desktop supervisor against the real server process (`bun server/main.ts`, as `npm run desktop`
 * runs it): port choice, spawn with the launch token, readiness, crash and restart, shutdown with no
 * process left behind; and its failure paths with a deliberately stubborn server.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import {
  type CrashInfo,
  createLaunchToken,
  findFreePort,
  LOOPBACK,
  type ServerCommand,
  ServerSupervisor,
  SupervisorError,
  serverCommand,
  TOKEN_COOKIE,
} from "../../desktop/supervisor.ts";
import { DESKTOP_TOKEN_COOKIE } from "../../server/auth/desktop-token.ts";
import { REPO_ROOT } from "../helpers/app.ts";
import { cleanEnv } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";
import { waitFor } from "../helpers/wait.ts";

const dir = tempDir();
afterAll(() => dir.remove());
let n = 0;
const dataDir = () => join(dir.path, `data-${n++}`);

/** The development command, with the Bun running these tests. */
const devCommand = (): ServerCommand =>
  serverCommand({
    packaged: false,
    resourcesPath: "/unused",
    repoRoot: REPO_ROOT,
    dataDir: "/unused",
    bun: process.execPath,
  });

const STUBBORN: ServerCommand = {
  command: process.execPath,
  args: [join(import.meta.dir, "fixtures", "stubborn-server.ts")],
  cwd: REPO_ROOT,
};

/** False once the process is gone (a zombie waiting to be reaped counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = `/proc/${pid}/stat`;
  return !(existsSync(stat) && /^\d+ \(.*\) Z/.test(readFileSync(stat, "utf8")));
}

/** True once the process is gone; false if it is still there after 5 s. */
function eventuallyGone(pid: number): Promise<boolean> {
  return waitFor(() => !alive(pid), { timeoutMs: 5000, intervalMs: 25 }).catch(() => false);
}

describe("pure parts", () => {
  test("packaged: the binary from resources, run in the data dir; development: bun server/main.ts", () => {
    const common = { resourcesPath: "/opt/Atrium/resources", repoRoot: "/src/atrium", dataDir: "/u/data" };
    expect(serverCommand({ ...common, packaged: true, platform: "linux" })).toEqual({
      command: "/opt/Atrium/resources/server/atrium",
      args: [],
      cwd: "/u/data",
    });
    expect(serverCommand({ ...common, packaged: true, platform: "win32" }).command).toBe(
      "/opt/Atrium/resources/server/atrium.exe",
    );
    expect(serverCommand({ ...common, packaged: false })).toEqual({
      command: "/src/atrium/node_modules/bun/bin/bun.exe",
      args: ["/src/atrium/server/main.ts"],
      cwd: "/src/atrium",
    });
    expect(serverCommand({ ...common, packaged: false, bun: "/usr/bin/bun" }).command).toBe("/usr/bin/bun");
  });

  test("launch tokens are 256 random bits, cookie-safe, never repeated", () => {
    const tokens = new Set(Array.from({ length: 50 }, createLaunchToken));
    expect(tokens.size).toBe(50);
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test("the cookie name is the one the server reads", () => {
    expect(TOKEN_COOKIE).toBe(DESKTOP_TOKEN_COOKIE);
  });

  test("findFreePort gives a loopback port that can be bound", async () => {
    const port = await findFreePort();
    expect(port).toBeGreaterThan(0);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: LOOPBACK, port }, resolve);
    });
    server.close();
  });
});

describe("the real server", () => {
  test("start: loopback port, data dir, token required; stop leaves nothing running", async () => {
    const data = dataDir();
    const lines: string[] = [];
    const supervisor = new ServerSupervisor({
      command: devCommand(),
      dataDir: data,
      env: cleanEnv(),
      onOutput: (line) => lines.push(line),
    });
    const crashes: CrashInfo[] = [];
    supervisor.on("crash", (info) => crashes.push(info));
    const running = await supervisor.start();
    try {
      expect(running.origin).toBe(`http://127.0.0.1:${running.port}`);
      expect(supervisor.running).toEqual(running);
      expect(existsSync(join(data, "app.db"))).toBe(true);
      expect((await fetch(`${running.origin}/health/ready`)).status).toBe(200);
      // The server got this launch's token: without it a non-public route is refused.
      expect((await fetch(`${running.origin}/api/sessions`)).status).toBe(401);
      const withCookie = await fetch(`${running.origin}/api/sessions`, {
        headers: { cookie: `${TOKEN_COOKIE}=${supervisor.token}` },
      });
      expect(withCookie.status).not.toBe(401);
      expect(lines.some((line) => line.includes('"msg":"ready"'))).toBe(true);
      // The token never reaches the server's log.
      expect(lines.join("\n")).not.toContain(supervisor.token);
    } finally {
      await supervisor.stop();
    }
    expect(supervisor.running).toBeUndefined();
    expect(await eventuallyGone(running.pid)).toBe(true);
    expect(
      await fetch(`${running.origin}/health`).then(
        () => "answered",
        () => "refused",
      ),
    ).toBe("refused");
    expect(crashes).toEqual([]);
    // Its SIGTERM path ran: a clean shutdown is logged.
    expect(lines.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
  });

  test("a crash is reported with its output; restart comes back on the same port with the same token", async () => {
    const supervisor = new ServerSupervisor({ command: devCommand(), dataDir: dataDir(), env: cleanEnv() });
    const crashed = new Promise<CrashInfo>((resolve) => supervisor.once("crash", resolve));
    const first = await supervisor.start();
    try {
      process.kill(first.pid, "SIGKILL");
      const crash = await crashed;
      expect(crash.signal).toBe("SIGKILL");
      expect(crash.output).toContain('"msg":"ready"');
      expect(supervisor.running).toBeUndefined();

      const second = await supervisor.restart();
      expect(second.port).toBe(first.port);
      expect(second.pid).not.toBe(first.pid);
      const response = await fetch(`${second.origin}/api/sessions`, {
        headers: { authorization: `Bearer ${supervisor.token}` },
      });
      expect(response.status).not.toBe(401);
    } finally {
      await supervisor.stop();
    }
  });

  test("a port taken by another process: it moves to a free one", async () => {
    const squatter = Bun.serve({ hostname: LOOPBACK, port: 0, fetch: () => new Response("not atrium") });
    const supervisor = new ServerSupervisor({
      command: devCommand(),
      dataDir: dataDir(),
      env: cleanEnv(),
      preferredPort: squatter.port,
    });
    try {
      const running = await supervisor.start();
      expect(running.port).not.toBe(squatter.port);
      expect((await fetch(`${running.origin}/health/ready`)).status).toBe(200);
    } finally {
      await supervisor.stop();
      squatter.stop(true);
    }
  });

  test("the shell killed outright (SIGKILL): the server sees its stdin close and stops, no orphan", async () => {
    const shell = Bun.spawn(
      [process.execPath, join(import.meta.dir, "fixtures", "shell-parent.ts"), REPO_ROOT, dataDir()],
      { env: cleanEnv(), stdout: "pipe", stderr: "inherit" },
    );
    const reader = shell.stdout.getReader();
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const { pid } = JSON.parse(text) as { pid: number };
    expect(alive(pid)).toBe(true);
    shell.kill("SIGKILL");
    await shell.exited;
    const gone = await eventuallyGone(pid);
    if (!gone) process.kill(pid, "SIGKILL"); // a failing run must not leave the orphan behind
    expect(gone).toBe(true);
  });

  test("a server that cannot start: SupervisorError carrying its own message", async () => {
    const command = devCommand();
    const supervisor = new ServerSupervisor({
      command: { ...command, args: [...command.args, "--policy", join(dir.path, "missing.toml")] },
      dataDir: dataDir(),
      env: cleanEnv(),
    });
    const error = await supervisor.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SupervisorError);
    expect((error as SupervisorError).message).toBe("the server exited during startup (exit code 1)");
    expect((error as SupervisorError).output).toContain("policy file not found");
    expect(supervisor.running).toBeUndefined();
  });

  test("a missing executable: SupervisorError naming it", async () => {
    const missing = join(dir.path, "no-such-atrium");
    const supervisor = new ServerSupervisor({
      command: { command: missing, args: [], cwd: dir.path },
      dataDir: dataDir(),
    });
    const error = (await supervisor.start().catch((e: unknown) => e)) as SupervisorError;
    expect(error).toBeInstanceOf(SupervisorError);
    expect(error.output).toContain(`cannot start ${missing}`);
  });
});

describe("a stubborn server", () => {
  const grandchildOf = (lines: string[]) =>
    Number(lines.find((l) => l.startsWith("grandchild "))?.split(" ")[1]);

  test("never ready: the wait times out, and the server and its children are killed", async () => {
    const lines: string[] = [];
    const supervisor = new ServerSupervisor({
      command: STUBBORN,
      dataDir: dataDir(),
      env: cleanEnv({ FIXTURE_READY_STATUS: "503" }),
      readyTimeoutMs: 1_000,
      graceMs: 200,
      onOutput: (line) => lines.push(line),
    });
    const error = (await supervisor.start().catch((e: unknown) => e)) as SupervisorError;
    expect(error).toBeInstanceOf(SupervisorError);
    expect(error.message).toBe("the server was not ready within 1 s");
    const grandchild = grandchildOf(lines);
    expect(grandchild).toBeGreaterThan(0);
    expect(await eventuallyGone(grandchild)).toBe(true);
  });

  test("never says it listens: the same timeout, and nothing of it is left", async () => {
    const lines: string[] = [];
    const supervisor = new ServerSupervisor({
      command: STUBBORN,
      dataDir: dataDir(),
      env: cleanEnv({ FIXTURE_READY_STATUS: "200", FIXTURE_SILENT: "1" }),
      readyTimeoutMs: 1_000,
      graceMs: 200,
      onOutput: (line) => lines.push(line),
    });
    const error = (await supervisor.start().catch((e: unknown) => e)) as SupervisorError;
    expect(error).toBeInstanceOf(SupervisorError);
    expect(error.message).toBe("the server was not ready within 1 s");
    const grandchild = grandchildOf(lines);
    expect(grandchild).toBeGreaterThan(0);
    expect(await eventuallyGone(grandchild)).toBe(true);
    expect(supervisor.running).toBeUndefined();
  });

  test("ignores SIGTERM: stop kills it after the grace period, grandchild included", async () => {
    const lines: string[] = [];
    const supervisor = new ServerSupervisor({
      command: STUBBORN,
      dataDir: dataDir(),
      env: cleanEnv({ FIXTURE_READY_STATUS: "200" }),
      graceMs: 300,
      onOutput: (line) => lines.push(line),
    });
    const crashes: CrashInfo[] = [];
    supervisor.on("crash", (info) => crashes.push(info));
    const running = await supervisor.start();
    const grandchild = grandchildOf(lines);
    expect(alive(grandchild)).toBe(true);
    await supervisor.stop();
    expect(lines).toContain("ignoring SIGTERM");
    expect(await eventuallyGone(running.pid)).toBe(true);
    expect(await eventuallyGone(grandchild)).toBe(true);
    expect(crashes).toEqual([]);
  });
});
