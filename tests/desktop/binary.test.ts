/**
 * The compiled server (`npm run build`): built with `bun build --compile`, placed where electron-builder
 * puts it (resources/server/atrium), started by the supervisor from an empty data dir outside any
 * checkout, as the packaged desktop app starts it. It must come up ready with everything embedded: the
 * built-in policy, the migrations, the UI and its script, Swagger UI, the pi runtime's chat turn and pyodide for the sandbox.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ServerSupervisor, serverCommand, TOKEN_COOKIE } from "../../desktop/supervisor.ts";
import { buildServerBinary } from "../../scripts/build.ts";
import { APP_VERSION } from "../../server/version.ts";
import { cleanEnv } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";
import { assetPaths } from "../helpers/web.ts";

const dir = tempDir("atrium-binary-");
const resources = join(dir.path, "resources");
const dataDir = join(dir.path, "user-data", "data");
const cacheDir = join(dir.path, "cache");
const lines: string[] = [];
let binary: string;
let supervisor: ServerSupervisor;
let origin: string;

beforeAll(async () => {
  binary = await buildServerBinary({ outfile: join(resources, "server", "atrium") });
  mkdirSync(dataDir, { recursive: true });
  const command = serverCommand({ packaged: true, resourcesPath: resources, repoRoot: "/nowhere", dataDir });
  supervisor = new ServerSupervisor({
    command,
    dataDir,
    env: cleanEnv({ XDG_CACHE_HOME: cacheDir }),
    onOutput: (l) => lines.push(l),
  });
  origin = (await supervisor.start()).origin;
}, 120_000);

afterAll(async () => {
  await supervisor?.stop();
  dir.remove();
});

const get = (path: string, init?: RequestInit) => fetch(`${origin}${path}`, init);

describe("the compiled server binary", () => {
  test("is one executable at the path the desktop shell expects, with the same CLI", async () => {
    expect(binary).toBe(join(resources, "server", "atrium"));
    const version = Bun.spawnSync([binary, "--version"], { env: cleanEnv() });
    expect(version.stdout.toString().trim()).toBe(`Atrium ${APP_VERSION}`);
    const help = Bun.spawnSync([binary, "--help"], { env: cleanEnv() }).stdout.toString();
    for (const flag of ["--host", "--port", "--data-dir", "--policy", "--allow-non-loopback-bind"])
      expect(help).toContain(flag);
    // It names itself as the user runs it, never as a checkout command.
    expect(help).toContain("Usage: atrium [flags]");
    expect(help).not.toContain("server/main.ts");
    const index = Bun.spawnSync([binary, "index", "--help"], { env: cleanEnv() }).stdout.toString();
    expect(index).toStartWith("usage: atrium index ");
    const missing = Bun.spawnSync(
      [binary, "index", join(dir.path, "no-such-corpus"), "--data-dir", dataDir],
      {
        env: cleanEnv(),
      },
    );
    expect(missing.exitCode).not.toBe(0);
    expect(missing.stderr.toString()).toStartWith("atrium index: ");
    expect(missing.stderr.toString()).not.toContain("server/main.ts");
  });

  test("from an empty data dir it migrates and passes /health/ready with the built-in policy", async () => {
    const ready = await get("/health/ready");
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "ready", database: "ok", mode: "local" });
    expect(existsSync(join(dataDir, "app.db"))).toBe(true);
    // No ./config/policy.toml where it runs: the embedded copy of the committed policy was loaded.
    expect(existsSync(join(dataDir, "config"))).toBe(false);
    const readyLine = lines
      .map((l) => (l.startsWith("{") ? JSON.parse(l) : {}))
      .find((l) => l.msg === "ready");
    expect(readyLine).toMatchObject({ profile: "sandbox", dataDir });
  });

  test("serves the UI built from web/ (embedded: no build/web beside the binary)", async () => {
    const page = await get("/app/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const { script, style } = assetPaths(await page.text());
    const js = await get(script);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toContain("text/javascript");
    expect(await js.text()).toContain("/api/chat/sessions");
    const css = await get(style);
    expect(css.status).toBe(200);
    expect((await css.text()).length).toBeGreaterThan(0);
    const icon = await get("/favicon.ico");
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/png");
  });

  test("serves Swagger UI with its assets and the OpenAPI document", async () => {
    const page = await get("/swagger");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("/swagger/assets/swagger-ui-bundle.js");
    for (const asset of ["/swagger/assets/swagger-ui-bundle.js", "/swagger/assets/swagger-ui.css"]) {
      const response = await get(asset);
      expect({ asset, status: response.status }).toEqual({ asset, status: 200 });
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    }
    const doc = await get("/swagger/json");
    expect(doc.status).toBe(200);
    expect(await doc.json()).toMatchObject({ openapi: expect.stringMatching(/^3\.1/) });
  });

  test("runs a chat turn on the pi runtime (offline model) with everything pi needs embedded", async () => {
    const response = await get("/api/chat", {
      method: "POST",
      headers: { cookie: `${TOKEN_COOKIE}=${supervisor.token}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "hello from the binary" }),
    });
    expect(response.status).toBe(200);
    const events = (await response.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    expect(events[0]?.type).toBe("start");
    expect(events.at(-1)?.type).toBe("done");
  });

  test("runs a turn's Python in the sandbox from pyodide files it carries itself", async () => {
    const headers = { cookie: `${TOKEN_COOKIE}=${supervisor.token}`, "content-type": "application/json" };
    const created = await get("/api/sessions", {
      method: "POST",
      headers,
      body: JSON.stringify({ title: "bin" }),
    });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    const turn = await get(`/api/sessions/${id}/turns`, {
      method: "POST",
      headers: { ...headers, "idempotency-key": "binary-turn" },
      body: JSON.stringify({ text: "```python\nprint(6 * 7)\n```" }),
    });
    expect(turn.status).toBe(200);
    const events = (await turn.text())
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; output?: string });
    expect(events.find((e) => e.type === "output")?.output).toBe("42\n");
    expect(events.some((e) => e.type === "turn_finish")).toBe(true);
    // No pyodide folder ships beside the binary: the embedded copy was written to the cache.
    expect(existsSync(join(resources, "server", "pyodide"))).toBe(false);
    expect(existsSync(join(cacheDir, "atrium"))).toBe(true);
  }, 120_000);

  test("settings edits of its built-in policy are saved in the data dir", async () => {
    const headers = { cookie: `${TOKEN_COOKIE}=${supervisor.token}`, "content-type": "application/json" };
    const before = (await (await get("/api/settings", { headers })).json()) as { revision: string };
    const edited = await get("/api/settings", {
      method: "PATCH",
      headers,
      body: JSON.stringify({ revision: before.revision, scope: "sandbox", path: "rlm.max_iters", value: 20 }),
    });
    expect(edited.status).toBe(200);
    expect(
      ((await edited.json()) as { effective: { rlm: { max_iters: number } } }).effective.rlm.max_iters,
    ).toBe(20);
    expect(readFileSync(join(dataDir, "policy.toml"), "utf8")).toContain("max_iters = 20");
    const after = (await (await get("/api/settings", { headers })).json()) as { revision: string };
    expect(after.revision).not.toBe(before.revision);
  });

  test("requires the desktop token it was started with", async () => {
    expect((await get("/api/sessions")).status).toBe(401);
    const withToken = await get("/api/sessions", {
      headers: { cookie: `${TOKEN_COOKIE}=${supervisor.token}` },
    });
    expect(withToken.status).not.toBe(401);
  });
});
