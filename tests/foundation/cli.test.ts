/** The command line and the server process: flags, loopback refusal, listening line, clean shutdown. */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { COMMANDS } from "../../server/commands.ts";
import { parseCli } from "../../server/config/cli.ts";
import { isLoopback } from "../../server/http/client.ts";
import { REPO_ROOT } from "../helpers/app.ts";
import { spawn, startServerProcess, waitForOk } from "../helpers/server.ts";
import { readChunks } from "../helpers/streams.ts";
import { tempDir } from "../helpers/tmp.ts";
import { waitFor } from "../helpers/wait.ts";

const dir = tempDir();
afterAll(() => dir.remove());
let n = 0;
const dataDir = () => join(dir.path, `data-${n++}`);
const PROBE_SERVER = join(REPO_ROOT, "tests", "fixtures", "probe-server.ts");

describe("parseCli", () => {
  test("defaults: loopback, port 8000, the XDG data dir, the repository policy", () => {
    const result = parseCli([], { HOME: "/home/u" }, "/repo");
    expect(result).toEqual({
      kind: "serve",
      options: {
        host: "127.0.0.1",
        port: 8000,
        dataDir: "/home/u/.local/share/atrium",
        policyPath: "/repo/config/policy.toml",
        allowNonLoopbackBind: false,
        publicOrigins: [],
        trustProxy: [],
      },
    });
    expect(parseCli([], { XDG_DATA_HOME: "/xdg", HOME: "/h" }, "/r")).toMatchObject({
      options: { dataDir: "/xdg/atrium" },
    });
    expect(parseCli([], { APP_DATA_DIR: "/data", XDG_DATA_HOME: "/xdg" }, "/r")).toMatchObject({
      options: { dataDir: "/data" },
    });
  });

  test("every flag", () => {
    const argv = [
      "--host",
      "::1",
      "--port",
      "0",
      "--data-dir",
      "/d",
      "--policy",
      "/p.toml",
      "--allow-non-loopback-bind",
      "--public-origin",
      "https://a.example",
      "--public-origin",
      "http://b.example:8080",
      "--trust-proxy",
      "loopback,10.0.0.0/8",
      "--trust-proxy",
      "192.0.2.1",
    ];
    expect(parseCli(argv, {}, "/r")).toEqual({
      kind: "serve",
      options: {
        host: "::1",
        port: 0,
        dataDir: "/d",
        policyPath: "/p.toml",
        allowNonLoopbackBind: true,
        publicOrigins: ["https://a.example", "http://b.example:8080"],
        trustProxy: ["loopback", "10.0.0.0/8", "192.0.2.1"],
      },
    });
  });

  test("bad input is one clear message", () => {
    expect(parseCli(["--port", "http"], {}, "/r")).toEqual({
      kind: "error",
      message: "--port must be an integer from 0 to 65535, got 'http'",
    });
    expect(parseCli(["--port", "70000"], {}, "/r")).toMatchObject({ kind: "error" });
    expect(parseCli(["--port", "-1"], {}, "/r")).toMatchObject({ kind: "error" });
    expect(parseCli(["--bogus"], {}, "/r")).toMatchObject({
      kind: "error",
      message: expect.stringContaining("--bogus"),
    });
    expect(parseCli(["serve"], {}, "/r")).toMatchObject({
      kind: "error",
      message: "unexpected argument 'serve'. See --help.",
    });
  });

  test("--help documents every flag and every variable the server reads", () => {
    const help = parseCli(["--help"], {}, "/r");
    if (help.kind !== "help") throw new Error("expected help");
    const flags = [
      "--host",
      "--port",
      "--data-dir",
      "--policy",
      "--allow-non-loopback-bind",
      "--public-origin",
      "--help",
      "--version",
    ];
    const vars = [
      "APP_DATA_DIR",
      "XDG_DATA_HOME",
      "APP_LOG_LEVEL",
      "APP_CHAT_RUNTIME_REQUIRE_AUTH",
      "APP_MANAGED_AUTH_URL",
      "APP_HOSTED",
      "APP_AUTH_SECRET",
      "APP_CHAT_DATABASE_URL",
      "APP_DESKTOP_TOKEN",
      "APP_PUBLIC_ORIGINS",
      "SANDBOX_API_KEY",
      "SANDBOX_WEBHOOK_SECRET",
      "AWS_ACCESS_KEY_ID",
      "OPENAI_API_KEY",
      "ANTHROPIC_API_KEY",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "GEMINI_API_KEY",
      "MISTRAL_API_KEY",
      "GROQ_API_KEY",
      "OLLAMA_BASE_URL",
    ];
    for (const word of [...flags, ...vars]) expect(help.text).toContain(word);
  });

  test("loopback hosts: the one rule of docs/security.md", () => {
    const yes = ["127.0.0.1", "127.1.2.3", "localhost", "LocalHost", "::1", "[::1]", "::ffff:127.0.0.1"];
    for (const host of yes) expect({ host, loopback: isLoopback(host) }).toEqual({ host, loopback: true });
    const no = [
      "0.0.0.0",
      "::",
      "192.168.1.10",
      "example.com",
      "127.attacker.example",
      "127.0.0.1.nip.io",
      "app.localhost",
      "::ffff:10.0.0.1",
      "128.0.0.1",
      "",
      undefined,
    ];
    for (const host of no) expect({ host, loopback: isLoopback(host) }).toEqual({ host, loopback: false });
  });
});

describe("the server process", () => {
  test("--help prints the usage and every subcommand with its summary, and exits 0", async () => {
    const proc = spawn(["--help"]);
    expect(await proc.exited).toBe(0);
    const help = await new Response(proc.stdout).text();
    // From a checkout Bun is in node_modules/.bin, not on PATH: the usage names a command that runs here.
    expect(help).toContain("Usage: npx bun server/main.ts [flags]");
    expect(Object.keys(COMMANDS).length).toBeGreaterThan(0);
    for (const [name, command] of Object.entries(COMMANDS))
      expect(help).toMatch(new RegExp(`^  ${name} +${RegExp.escape(command.summary)}$`, "m"));
  });

  test("a non-loopback host without the flag is refused with one line and a non-zero exit", async () => {
    const proc = spawn(["--host", "0.0.0.0", "--port", "0", "--data-dir", dataDir()]);
    expect(await proc.exited).not.toBe(0);
    const stderr = await new Response(proc.stderr).text();
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toContain("refusing to listen on 0.0.0.0");
    expect(stderr).toContain("--allow-non-loopback-bind");
    expect(await new Response(proc.stdout).text()).toBe("");
  });

  test("with the flag it listens on every interface", async () => {
    const server = await startServerProcess([
      "--host",
      "0.0.0.0",
      "--allow-non-loopback-bind",
      "--port",
      "0",
      "--data-dir",
      dataDir(),
    ]);
    expect(server.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    server.proc.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  });

  test("a bad policy stops startup naming the key and the file", async () => {
    const policy = join(dir.path, "bad-policy.toml");
    writeFileSync(
      policy,
      readFileSync(join(REPO_ROOT, "config", "policy.toml"), "utf8").replace(
        "[defaults.rlm]",
        "[defaults.rlm]\nrecursion_max_depth = 3",
      ),
    );
    const proc = spawn(["--port", "0", "--data-dir", dataDir(), "--policy", policy]);
    expect(await proc.exited).toBe(1);
    const stderr = await new Response(proc.stderr).text();
    expect(stderr).toContain(policy);
    expect(stderr).toContain("unknown key 'defaults.rlm.recursion_max_depth'");
  });

  test("--port 0 picks a free port, says where to go next, and SIGTERM closes SQLite cleanly", async () => {
    const data = dataDir();
    const server = await startServerProcess(["--port", "0", "--data-dir", data]);
    // The listening line stays first (supervisors and scripts read it), then one line of next steps.
    expect(server.stdout).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    await waitForOk(`${server.url}/health/ready`);
    expect(existsSync(join(data, "app.db"))).toBe(true);
    server.proc.kill("SIGTERM");
    expect(await server.exited).toBe(0);
    // Closing the last connection checkpoints the WAL and removes it.
    expect(existsSync(join(data, "app.db-wal"))).toBe(false);
    expect(await server.laterStdout).toBe(
      `UI ${server.url}/app/ · Swagger UI ${server.url}/swagger/ · data in ${data}\n`,
    );
  });

  test.each(["SIGTERM", "SIGINT"] as const)(
    "%s after a chat turn (pi and its signal handlers loaded) still stops cleanly",
    async (signal) => {
      const server = await startServerProcess(["--port", "0", "--data-dir", dataDir()]);
      await waitForOk(`${server.url}/health/ready`);
      const turn = await fetch(`${server.url}/api/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: "hello" }),
      });
      expect((await turn.text()).trim().split("\n").at(-1)).toContain('"type":"done"');
      server.proc.kill(signal);
      expect(await server.exited).toBe(0);
    },
  );

  test("a port in use is a clear error that suggests --port 0", async () => {
    const first = await startServerProcess(["--port", "0", "--data-dir", dataDir()]);
    const port = new URL(first.url).port;
    const second = spawn(["--port", port, "--data-dir", dataDir()]);
    expect(await second.exited).toBe(1);
    const stderr = await new Response(second.stderr).text();
    expect(stderr).toContain(`127.0.0.1:${port} is already in use`);
    // It says how to get past it.
    expect(stderr).toContain("--port 0");
    expect(stderr.trim().split("\n")).toHaveLength(1);
    first.proc.kill("SIGINT");
    expect(await first.exited).toBe(0);
  });

  test("a body over the limit is refused with 413 by the listening server", async () => {
    const server = await startServerProcess(["--port", "0", "--data-dir", dataDir()]);
    const tooBig = new Uint8Array(12 * 1024 * 1024);
    const response = await fetch(`${server.url}/api/sessions`, { method: "POST", body: tooBig });
    expect(response.status).toBe(413);
    await waitForOk(`${server.url}/health`);
    server.proc.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  });

  test.each(["SIGTERM", "SIGINT"] as const)(
    "%s lets in-flight responses finish and ends open streams",
    async (signal) => {
      const server = await startServerProcess(["--port", "0", "--data-dir", dataDir()], {
        entry: PROBE_SERVER,
      });
      await waitForOk(`${server.url}/health/ready`);
      const stream = await fetch(`${server.url}/api/sessions/__forever`);
      const frames = readChunks(stream.body!, "\n\n");
      expect((await frames.next()).value).toBe('event: open\ndata: {"ok":true}');
      const slow = fetch(`${server.url}/api/sessions/__slow`);
      const inFlight = async () =>
        ((await (await fetch(`${server.url}/api/sessions/__slow/in-flight`)).json()) as { count: number })
          .count;
      await waitFor(async () => (await inFlight()) === 1, { what: "the slow request to be in flight" });
      server.proc.kill(signal);
      const response = await slow;
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ finished: true });
      // The stream ends (the loop finishes) instead of holding the shutdown open.
      const later: string[] = [];
      for await (const frame of frames) if (frame !== ": keep-alive") later.push(frame);
      expect(later).toEqual([]);
      expect(await server.exited).toBe(0);
      expect(await server.stderr()).toContain('"msg":"stopped"');
    },
  );
});
