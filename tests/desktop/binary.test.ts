/**
 * The compiled server (`npm run build`): built with `bun build --compile`, placed where electron-builder
 * puts it (resources/server/atrium), started by the supervisor from an empty data dir outside any
 * checkout, as the packaged desktop app starts it. It must come up ready with everything embedded: the
 * built-in policy, the migrations, the UI and its script, Swagger UI, the pi runtime's chat turn, pyodide for the
 * sandbox, the document reader its `parse` subcommand runs, and sqlite-vec for search's vectors (written
 * to the cache, checked by hash before each load).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ServerSupervisor, serverCommand, TOKEN_COOKIE } from "../../desktop/supervisor.ts";
import { buildServerBinary } from "../../scripts/build.ts";
import { APP_VERSION } from "../../server/version.ts";
import { REPO_ROOT } from "../helpers/app.ts";
import { cleanEnv, finished, startServerProcess, waitForOk } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";
import { assetPaths } from "../helpers/web.ts";
import { fixtureDocuments } from "../search/fixtures.ts";
import { type FakeServer, startFakeOpenAi } from "../search/openai-fake.ts";
import { minimalPdf } from "../search/pdf-fixture.ts";

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

let embeddings: FakeServer | undefined;
afterAll(async () => {
  await supervisor?.stop();
  await embeddings?.stop();
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
      .map((line) => JSON.parse(line.slice(6)) as { type: string; output?: string; isDelta?: boolean });
    expect(events.find((e) => e.type === "output" && !e.isDelta)?.output).toBe("42\n");
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

  test("reads PDF and HTML in its own parse subprocess: the upload route and the index command", async () => {
    const form = new FormData();
    form.set("name", "binary-upload");
    form.append(
      "files",
      new File([minimalPdf(["Ada Lovelace wrote the first program."]) as Uint8Array<ArrayBuffer>], "ada.pdf"),
    );
    form.append("files", new File(["<p>Grace Hopper wrote the first compiler.</p>"], "hopper.html"));
    const uploaded = await get("/search/index/upload", {
      method: "POST",
      headers: { cookie: `${TOKEN_COOKIE}=${supervisor.token}` },
      body: form,
    });
    expect(uploaded.status).toBe(200);
    const done = (await uploaded.text()).split("event: done\ndata: ")[1]?.split("\n")[0] ?? "{}";
    expect(JSON.parse(done)).toMatchObject({ documents_indexed: 2, skipped: [] });

    const corpus = join(dir.path, "documents");
    mkdirSync(corpus);
    writeFileSync(join(corpus, "ada.pdf"), minimalPdf(["Ada Lovelace wrote the first program."]));
    writeFileSync(join(corpus, "hopper.html"), "<p>Grace Hopper wrote the first compiler.</p>");
    writeFileSync(join(corpus, "broken.pdf"), "%PDF-1.4 not really");
    const proc = Bun.spawn([binary, "index", corpus, "--data-dir", join(dir.path, "documents-data")], {
      cwd: dir.path,
      env: cleanEnv(),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const { code, stdout } = await finished(proc);
    expect(code).toBe(0);
    expect(stdout).toMatch(/documents\s+2 \(2 indexed, 0 unchanged\)/);
    expect(stdout).toContain("    broken.pdf: unreadable PDF (");
  }, 60_000);

  test("requires the desktop token it was started with", async () => {
    expect((await get("/api/sessions")).status).toBe(401);
    const withToken = await get("/api/sessions", {
      headers: { cookie: `${TOKEN_COOKIE}=${supervisor.token}` },
    });
    expect(withToken.status).not.toBe(401);
  });
});

describe("search vectors in the compiled binary", () => {
  /** The built-in policy with an embedding model named; the endpoint comes from APP_EMBEDDINGS_BASE_URL. */
  const vectorPolicy = () =>
    readFileSync(join(REPO_ROOT, "config", "policy.toml"), "utf8").replace(
      'embeddings_model = ""',
      'embeddings_model = "fake-embed"',
    );
  const vecDir = join(cacheDir, "atrium", "sqlite-vec");
  const npmFile = join(
    REPO_ROOT,
    "node_modules",
    `sqlite-vec-${process.platform}-${process.arch}`,
    "vec0.so",
  );
  const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
  const cached = () => join(vecDir, readdirSync(vecDir).find((n) => n.startsWith("vec0-")) ?? "missing");
  const vectorEnv = () => {
    embeddings ??= startFakeOpenAi({
      reply: () => ({ text: "unused" }),
      embed: (texts) => texts.map((t) => [1, t.length % 7, t.includes("Scrooge") ? 5 : 0]),
    });
    return cleanEnv({ XDG_CACHE_HOME: cacheDir, APP_EMBEDDINGS_BASE_URL: `${embeddings.url}/v1` });
  };

  test("indexes with an embeddings endpoint and ranks by vectors through the extension it carries", async () => {
    const policy = join(dir.path, "vector-policy.toml");
    writeFileSync(policy, vectorPolicy());
    const server = await startServerProcess(
      ["--port", "0", "--data-dir", join(dir.path, "vector-data"), "--policy", policy],
      { binary, env: vectorEnv() },
    );
    try {
      // "listening" comes before migrations end; until then every route but the probes is a 503.
      await waitForOk(`${server.url}/health/ready`, 30_000);
      const documents = fixtureDocuments().map((d) => ({ name: d.title, text: d.text }));
      const built = await fetch(`${server.url}/search/index`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ documents }),
      });
      expect(built.status).toBe(200);
      const summary = (await built.json()) as { entities: number; vectors?: number; warnings: string[] };
      expect(summary.warnings).toEqual([]);
      expect(summary.entities).toBeGreaterThan(10);
      expect(summary.vectors).toBe(summary.entities);
      const listed = (await (await fetch(`${server.url}/search/indexes`)).json()) as {
        indexes: { vectors?: { model: string; entities: number; note?: string } }[];
      };
      // In use, not the BM25 fallback: no note saying why search stays on BM25.
      expect(listed.indexes[0]?.vectors).toEqual({ model: "fake-embed", entities: summary.entities });
      const local = await fetch(`${server.url}/search/local`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "Who is Scrooge?" }),
      });
      expect(local.status).toBe(200);
      expect(embeddings?.embeddings.at(-1)?.input).toEqual(["Who is Scrooge?"]);
    } finally {
      server.proc.kill();
      await server.exited;
    }
    // The file SQLite loaded is npm's build, byte for byte, in a folder only the user can write.
    expect(sha256(cached())).toBe(sha256(npmFile));
    expect(cached()).toContain(sha256(npmFile).slice(0, 16));
    expect(statSync(cached()).mode & 0o777).toBe(0o644);
    expect(statSync(vecDir).mode & 0o777).toBe(0o700);
  }, 60_000);

  test("a truncated cached extension is caught by its hash and rewritten, not loaded", async () => {
    const cwd = join(dir.path, "index-cwd");
    mkdirSync(join(cwd, "config"), { recursive: true });
    writeFileSync(join(cwd, "config", "policy.toml"), vectorPolicy());
    const corpus = join(cwd, "corpus");
    mkdirSync(corpus);
    for (const d of fixtureDocuments()) writeFileSync(join(corpus, d.title), d.text);
    // Asynchronous: the embeddings endpoint answers from this process.
    const index = async () => {
      const proc = Bun.spawn([binary, "index", corpus, "--data-dir", join(cwd, "data")], {
        cwd,
        env: vectorEnv(),
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const { code, stdout, stderr } = await finished(proc);
      // stderr carries one progress line per phase; a warning there would say search stayed on BM25.
      return { code, stdout, warnings: stderr.split("\n").filter((l) => l.includes("warning")) };
    };
    if (!existsSync(vecDir)) expect((await index()).code).toBe(0);
    const good = sha256(cached());
    writeFileSync(cached(), readFileSync(cached()).subarray(0, 4096));
    expect(sha256(cached())).not.toBe(good);
    const run = await index();
    expect({ code: run.code, warnings: run.warnings }).toEqual({ code: 0, warnings: [] });
    const entities = Number(/entities\s+(\d+)/.exec(run.stdout)?.[1]);
    expect(entities).toBeGreaterThan(10);
    expect(run.stdout).toContain(`vectors        ${entities} (entities embedded for local search)`);
    expect(sha256(cached())).toBe(good);
    expect(readdirSync(vecDir)).toHaveLength(1);
  }, 60_000);
});
