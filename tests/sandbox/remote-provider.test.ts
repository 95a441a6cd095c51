/**
 * The remote sandbox provider against a scripted Daytona-compatible server on a real port: one sandbox
 * per owner (created once, reused, started when stopped, one create under concurrent ensures), commands
 * streamed with their exit code, timeouts and aborts that kill the remote command, preview links with
 * their token, workspace-confined file operations, and provider failures (bad key, 500, unreachable,
 * slow) as bounded, clear errors that never carry the key. Every request is checked for the key's place.
 */
import { afterAll, afterEach, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createEnvSource } from "../../server/config/env.ts";
import { sandboxMigrations } from "../../server/sandbox/users/migrations/index.ts";
import {
  RemoteSandboxProvider,
  remoteSandboxConfig,
  remoteSandboxName,
} from "../../server/sandbox/users/remote.ts";
import { DAYTONA_PUBLIC_API, type RemoteSandboxConfig } from "../../server/sandbox/users/remote-config.ts";
import { sessionLine } from "../../server/sandbox/users/remote-exec.ts";
import { openDatabase } from "../../server/storage/database.ts";
import type { Db } from "../../server/storage/db/port.ts";
import { sqlitePort } from "../../server/storage/db/sqlite.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { type FakeDaytona, startFakeDaytona } from "../helpers/daytona.ts";
import { tempDir } from "../helpers/tmp.ts";
import { waitFor } from "../helpers/wait.ts";

setDefaultTimeout(20_000);

const KEY = "test-key";
const WORKSPACE = "/home/daytona/agent-workspace";
const dir = tempDir("atrium-remote-");
let fake: FakeDaytona;
let store: Db;
let dbCount = 0;

beforeEach(() => {
  fake = startFakeDaytona({ keys: [KEY, "user-key"] });
  const db = openDatabase(`${dir.path}/app-${++dbCount}.db`);
  migrate(db, [sandboxMigrations]);
  store = sqlitePort(db);
});
afterEach(async () => {
  await fake.stop();
});
afterAll(() => dir.remove());

function config(over: Partial<RemoteSandboxConfig> = {}): RemoteSandboxConfig {
  return {
    apiUrl: fake.apiUrl,
    apiKey: KEY,
    target: "eu",
    toolboxHosts: [],
    requestTimeoutMs: 2_000,
    startTimeoutMs: 5_000,
    pollIntervalMs: 20,
    ...over,
  };
}

const provider = (over: Partial<RemoteSandboxConfig> = {}, keyFor?: (o: string) => string | undefined) =>
  new RemoteSandboxProvider(store, config(over), { keyFor });
const calls = (method: string, path: string | RegExp) =>
  fake.requests.filter(
    (r) => r.method === method && (typeof path === "string" ? r.path === path : path.test(r.path)),
  );

/** The key travels only as `Authorization: Bearer <key>`: never in a path, a query or a body. */
function expectKeyOnlyInAuthorization(key: string) {
  for (const r of fake.requests) {
    expect(r.authorization).toBe(`Bearer ${key}`);
    expect(`${r.path}?${r.query}${JSON.stringify(r.json ?? "")}`).not.toContain(key);
  }
}

describe("configuration", () => {
  const env = (vars: Record<string, string>) => createEnvSource(vars);
  test("SANDBOX_API_KEY selects the remote provider; APP_SANDBOX_PROVIDER overrides", () => {
    expect(remoteSandboxConfig(env({}))).toBeUndefined();
    const chosen = remoteSandboxConfig(env({ SANDBOX_API_KEY: "k", SANDBOX_TARGET: "eu" }));
    expect(chosen).toMatchObject({ apiUrl: DAYTONA_PUBLIC_API, apiKey: "k", target: "eu" });
    expect(remoteSandboxConfig(env({ SANDBOX_API_KEY: "k", APP_SANDBOX_PROVIDER: "local" }))).toBeUndefined();
    expect(remoteSandboxConfig(env({ SANDBOX_API_KEY: "k", APP_SANDBOX_PROVIDER: "none" }))).toBeUndefined();
    expect(remoteSandboxConfig(env({ APP_SANDBOX_PROVIDER: "remote" }))).toMatchObject({ apiKey: undefined });
    expect(() => remoteSandboxConfig(env({ APP_SANDBOX_PROVIDER: "daytona" }))).toThrow(
      /local, remote or none/,
    );
  });

  test("an API URL that would carry the key in clear is refused", () => {
    const url = (u: string) => remoteSandboxConfig(env({ SANDBOX_API_KEY: "k", SANDBOX_API_URL: u }));
    expect(() => url("http://sandboxes.example.com/api")).toThrow(/https/);
    expect(() => url("ftp://example.com")).toThrow(/https/);
    expect(() => url("not a url")).toThrow(/not a URL/);
    expect(url("http://127.0.0.1:3000/api/")?.apiUrl).toBe("http://127.0.0.1:3000/api");
    // Names that only look local: a public DNS name starting with 127., a name under .localhost (whether
    // it resolves here depends on the resolver).
    expect(() => url("http://127.attacker.example/api")).toThrow(/https/);
    expect(() => url("http://sandboxes.localhost/api")).toThrow(/https/);
    expect(url("http://[::1]:3000/api")?.apiUrl).toBe("http://[::1]:3000/api");
  });
});

describe("one sandbox per owner", () => {
  test("ensure creates the sandbox once, records it, makes the workspace, then reuses it", async () => {
    const p = provider();
    const record = await p.ensure("alice");
    expect(record).toMatchObject({ owner: "alice", provider: "remote", sandboxId: "sb-1", state: "started" });
    const [create] = calls("POST", "/api/sandbox");
    expect(create?.json).toMatchObject({
      name: "atrium-user-alice",
      target: "eu",
      labels: { app: "atrium" },
    });
    expect(fake.folders.has(`sb-1:${WORKSPACE}`)).toBe(true);
    expect((await p.active("alice"))?.sandboxId).toBe("sb-1");
    expect(p.home).toBe("/home/daytona");
    expect(p.workspace).toBe(WORKSPACE);

    await p.ensure("alice");
    const restarted = provider(); // a new server process over the same database
    expect((await restarted.ensure("alice")).sandboxId).toBe("sb-1");
    expect(calls("POST", "/api/sandbox")).toHaveLength(1);
    expect(fake.sandboxes.size).toBe(1);
    expectKeyOnlyInAuthorization(KEY);
  });

  test("a stopped sandbox is started, and ensure waits until it reports started", async () => {
    const p = provider();
    await p.ensure("alice");
    await p.stop("alice");
    expect(calls("POST", "/api/sandbox/sb-1/stop")).toHaveLength(1);
    expect(await p.active("alice")).toBeUndefined();
    expect(fake.sandboxes.get("sb-1")?.state).toBe("stopped");

    const fresh = provider();
    expect((await fresh.ensure("alice")).state).toBe("started");
    expect(calls("POST", "/api/sandbox/sb-1/start")).toHaveLength(1);
    expect(fake.sandboxes.get("sb-1")?.state).toBe("started");
    expect(calls("POST", "/api/sandbox")).toHaveLength(1);
  });

  test("two owners get two sandboxes; an unsafe owner id becomes a safe name", async () => {
    const p = provider();
    const a = await p.ensure("alice");
    const b = await p.ensure("bob/../x");
    expect(a.sandboxId).not.toBe(b.sandboxId);
    const names = calls("POST", "/api/sandbox").map((r) => (r.json as { name: string }).name);
    expect(names).toEqual(["atrium-user-alice", remoteSandboxName("bob/../x")]);
    expect(names[1]).toMatch(/^atrium-user-=[0-9a-f]{64}$/);
  });

  test("concurrent ensures for one owner create one sandbox", async () => {
    const p = provider();
    const records = await Promise.all(Array.from({ length: 6 }, () => p.ensure("carol")));
    expect(new Set(records.map((r) => r.sandboxId)).size).toBe(1);
    expect(calls("POST", "/api/sandbox")).toHaveLength(1);
  });

  test("a sandbox another server created first (409) is adopted by name", async () => {
    await provider().ensure("alice");
    const other = new RemoteSandboxProvider(
      sqlitePort(
        (() => {
          const db = openDatabase(`${dir.path}/other-${++dbCount}.db`);
          migrate(db, [sandboxMigrations]);
          return db;
        })(),
      ),
      config(),
    );
    expect((await other.ensure("alice")).sandboxId).toBe("sb-1");
  });

  test("a user's stored key replaces the server's key for that user only", async () => {
    const p = provider({}, (owner) => (owner === "dave" ? "user-key" : undefined));
    await p.ensure("dave");
    expectKeyOnlyInAuthorization("user-key");
    fake.requests.length = 0;
    await p.ensure("erin");
    expectKeyOnlyInAuthorization(KEY);
    const keyless = new RemoteSandboxProvider(store, config({ apiKey: undefined }), {
      keyFor: () => undefined,
    });
    expect(keyless.availability("erin").available).toBe(false);
    await expect(keyless.ensure("erin")).rejects.toThrow(/no sandbox provider key/);
  });

  test("remove deletes the sandbox on the provider and marks it deleted", async () => {
    const p = provider();
    await p.ensure("alice");
    await p.remove("alice");
    expect(calls("DELETE", "/api/sandbox/sb-1")).toHaveLength(1);
    expect((await p.registry.of("alice"))?.state).toBe("deleted");
    expect((await p.ensure("alice")).sandboxId).toBe("sb-2");
  });
});

describe("exec", () => {
  test("output streams as it grows, the exit code comes back, the session is cleaned up", async () => {
    const p = provider();
    const chunks: string[] = [];
    const run = p.exec("alice", "echo one; echo 'two'", { onData: (d) => chunks.push(d.toString()) });
    const command = await waitFor(() => fake.commands[0], { what: "the command" });
    expect(command.line).toBe(sessionLine(WORKSPACE, "echo one; echo 'two'"));
    const exec = calls("POST", /\/process\/session\/[^/]+\/exec$/)[0];
    expect(exec?.json).toMatchObject({ runAsync: true });
    command.append("one\n");
    await waitFor(() => chunks.length === 1, { what: "the first chunk before the command ends" });
    command.append("two\n");
    command.finish(3);
    expect(await run).toEqual({ exitCode: 3 });
    expect(chunks.join("")).toBe("one\ntwo\n");
    expect(chunks[0]).toBe("one\n");
    await waitFor(() => calls("DELETE", `/toolbox/sb-1/process/session/${command.session}`).length === 1);
    expectKeyOnlyInAuthorization(KEY);
  });

  test("a time limit rejects timeout:N and kills the remote command", async () => {
    const p = provider();
    await p.ensure("alice");
    const started = Date.now();
    await expect(p.exec("alice", "sleep 100", { onData: () => {}, timeout: 1 })).rejects.toThrow(
      /^timeout:1$/,
    );
    expect(Date.now() - started).toBeLessThan(4_000);
    await waitFor(() => fake.commands[0]?.killed, { what: "the command killed" });
  });

  test("an abort rejects `aborted` at once and kills the remote command", async () => {
    const p = provider();
    const controller = new AbortController();
    const seen: string[] = [];
    const run = p.exec("alice", "tail -f log", {
      onData: (d) => seen.push(d.toString()),
      signal: controller.signal,
    });
    const command = await waitFor(() => fake.commands[0]);
    command.append("partial\n");
    await waitFor(() => seen.length > 0);
    fake.delayMs = 1_000; // the provider turns slow: the abort must not wait for it
    const at = Date.now();
    controller.abort();
    await expect(run).rejects.toThrow(/^aborted$/);
    expect(Date.now() - at).toBeLessThan(500);
    await waitFor(() => command.killed, { what: "the command killed" });
  });

  test("an already aborted signal rejects before any request", async () => {
    const p = provider();
    await expect(p.exec("alice", "true", { onData: () => {}, signal: AbortSignal.abort() })).rejects.toThrow(
      /^aborted$/,
    );
    expect(fake.requests).toHaveLength(0);
  });

  test("the session line runs the command in the workspace in its own shell, quoting intact", async () => {
    const work = tempDir("atrium-remote-cwd-");
    const command = `printf '%s|' "it's" "$PWD"; exit 7`;
    const child = Bun.spawn(["sh", "-c", sessionLine(work.path, command)], { stdout: "pipe" });
    expect(await new Response(child.stdout).text()).toBe(`it's|${work.path}|`);
    expect(await child.exited).toBe(7);
    work.remove();
  });
});

describe("preview", () => {
  test("the provider's preview URL with its token as a header, never the API key", async () => {
    const p = provider();
    expect(await p.preview("alice", 3000)).toBeUndefined(); // no running sandbox: nothing to preview
    expect(fake.requests).toHaveLength(0);
    await p.ensure("alice");
    const upstream = await p.preview("alice", 3000);
    expect(upstream).toEqual({
      url: "https://3000-sb-1.preview.test",
      headers: { "x-daytona-preview-token": "tok-sb-1" },
    });
    expect(JSON.stringify(upstream)).not.toContain(KEY);
    expect(calls("GET", "/api/sandbox/sb-1/ports/3000/preview-url")).toHaveLength(1);
    expect(await p.preview("alice", 0)).toBeUndefined();
    expect(await p.preview("alice", 65_536)).toBeUndefined();
  });
});

describe("files", () => {
  test("read and write inside the workspace; any path leaving it is refused before a request", async () => {
    const p = provider();
    await p.writeFile("alice", "notes/a.txt", new TextEncoder().encode("hello"));
    expect(calls("POST", "/toolbox/sb-1/files/upload")[0]?.query.get("path")).toBe(
      `${WORKSPACE}/notes/a.txt`,
    );
    expect(new TextDecoder().decode(await p.readFile("alice", `${WORKSPACE}/notes/a.txt`))).toBe("hello");
    await expect(p.readFile("alice", "missing.txt")).rejects.toThrow(/No such file/);

    const before = fake.requests.length;
    for (const bad of [
      "../x",
      "/etc/passwd",
      "notes/../../x",
      "",
      "/home/daytona/agent-workspace-evil/a",
      "a\0b",
    ]) {
      await expect(p.readFile("alice", bad)).rejects.toThrow();
      await expect(p.writeFile("alice", bad, new Uint8Array([1]))).rejects.toThrow();
    }
    await expect(p.readFile("alice", "/etc/passwd")).rejects.toThrow(/outside the sandbox workspace/);
    expect(fake.requests.length).toBe(before);
  });
});

describe("provider failures are bounded, clear and keyless", () => {
  test("a wrong key: 401 named, the key nowhere in the message", async () => {
    const secret = "sk-wrong-0123456789";
    const p = provider({ apiKey: secret });
    const error = await p.ensure("alice").catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/remote sandbox provider \(http:\/\/127\.0\.0\.1:\d+\)/);
    expect((error as Error).message).toMatch(/refused the API key \(401 Unauthorized\)/);
    expect((error as Error).message).not.toContain(secret);
    expect(await p.active("alice")).toBeUndefined();
  });

  test("a 500 names the status and the provider's message, with an echoed key scrubbed", async () => {
    fake.failWith = 500;
    const message = await provider()
      .ensure("alice")
      .catch((e: Error) => e.message);
    expect(message).toMatch(/answered 500 Internal Server Error to GET \/api\/sandbox\/atrium-user-alice/);
    expect(message).toContain("scripted failure");
    expect(message).not.toContain(KEY);
  });

  test("a redirect is not followed, so the key cannot be carried elsewhere", async () => {
    fake.failWith = 307;
    const message = await provider()
      .ensure("alice")
      .catch((e: Error) => e.message);
    expect(message).toMatch(/answered 307 to GET \/api\/sandbox\/atrium-user-alice/);
    expect(fake.requests).toHaveLength(1);
  });

  test("an unreachable provider fails at once with a clear message", async () => {
    await fake.stop();
    const message = await provider()
      .ensure("alice")
      .catch((e: Error) => e.message);
    expect(message).toMatch(/remote sandbox provider \(http:\/\/127\.0\.0\.1:\d+\) is unreachable/);
    expect(message).not.toContain(KEY);
  });

  test("a provider that stalls is given up on after the request bound", async () => {
    fake.delayMs = 5_000;
    const started = Date.now();
    const message = await provider({ requestTimeoutMs: 300 })
      .ensure("alice")
      .catch((e: Error) => e.message);
    expect(message).toMatch(/did not answer GET \/api\/sandbox\/atrium-user-alice within 1 s/);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  test("a sandbox that never starts is given up on after the start bound; an errored one says why", async () => {
    const slow = startFakeDaytona({ keys: [KEY], pollsToStart: 1_000_000 });
    const p = new RemoteSandboxProvider(store, { ...config({ startTimeoutMs: 300 }), apiUrl: slow.apiUrl });
    await expect(p.ensure("alice")).rejects.toThrow(
      /did not start sandbox atrium-user-alice within 1 s \(state creating\)/,
    );
    const box = slow.sandboxes.get("sb-1");
    if (box) Object.assign(box, { state: "error" });
    await expect(p.ensure("alice")).rejects.toThrow(/sandbox atrium-user-alice in state error/);
    await slow.stop();
  });

  test("the key is not sent to a toolbox host other than the API's", async () => {
    fake.toolboxProxyUrl = fake.toolboxProxyUrl.replace("127.0.0.1", "localhost");
    await expect(provider().ensure("alice")).rejects.toThrow(/not the API's host/);
    expect(fake.requests.filter((r) => r.path.startsWith("/toolbox"))).toHaveLength(0);
    // …unless the operator names that host as the provider's.
    expect((await provider({ toolboxHosts: ["localhost"] }).ensure("alice")).state).toBe("started");
  });
});
