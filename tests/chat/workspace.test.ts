// biome-ignore-all lint/suspicious/noExplicitAny: response bodies in tests are read loosely; the assertions check them.
/**
 * /api/workspace/*: the caller's agent workspace (contract bootstrap and health, tree, safe file reads,
 * the FTS5 projection with items, item, search and reindex), per owner, and the reindex CSRF flow and
 * rate limit of protected deployments.
 */

import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { workspaceRoot } from "../../server/chat/workspace/contract.ts";
import { authApp, OWN_ORIGIN, signUp } from "../auth/auth-app.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const rootOf = (app: TestApp, owner = "local") => workspaceRoot(app.dataDir, owner);
function put(app: TestApp, relative: string, text: string | Buffer, owner = "local") {
  const path = join(rootOf(app, owner), relative);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

/** sha256 of every canonical file (indexes/ left out): reindex must not change any. */
function canonicalDigest(root: string): string {
  const hash = createHash("sha256");
  const visit = (dir: string, rel: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const r = `${rel}/${entry.name}`;
      if (r === "/indexes") continue;
      if (entry.isDirectory()) visit(join(dir, entry.name), r);
      else
        hash.update(
          `${r}\0${readFileSync(join(dir, entry.name))}\0${statSync(join(dir, entry.name)).mtimeMs}`,
        );
    }
  };
  visit(root, "");
  return hash.digest("hex");
}

describe("contract", () => {
  test("health bootstraps the workspace once and reports manifest version and missing canonical paths", async () => {
    t = await createTestApp();
    const first = await t.json<Record<string, any>>("/api/workspace/health");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      status: "ok",
      workspaceAvailable: true,
      bootstrapComplete: true,
      projectionStatus: "ok",
      manifest: { path: "agent-workspace/manifest.json", exists: true, valid: true, version: 1 },
      missing: [],
    });
    expect(first.body.created).toContain("agent-workspace/memory/project");
    expect(first.body.created).toContain("agent-workspace/system/tool-policy.md");
    const manifest = JSON.parse(readFileSync(join(rootOf(t), "manifest.json"), "utf8"));
    expect(manifest).toMatchObject({ version: 1, generatedBy: "atrium", workspaceRoot: "agent-workspace" });
    // The workspace sits beside the turns family's files/ in the owner's one workspace folder.
    expect(rootOf(t)).toBe(join(t.dataDir, "workspaces", "local", "agent-workspace"));

    const again = await t.json<Record<string, any>>("/api/workspace/health");
    expect(again.body.created).toEqual([]);
    // A policy file the user edited is never overwritten.
    put(t, "system/tool-policy.md", "mine");
    rmSync(join(rootOf(t), "memory", "daily"), { recursive: true });
    writeFileSync(join(rootOf(t), "memory", "daily"), "a file where a folder belongs");
    writeFileSync(join(rootOf(t), "manifest.json"), "{broken");
    const degraded = await t.json<Record<string, any>>("/api/workspace/health");
    expect(degraded.body).toMatchObject({
      status: "degraded",
      bootstrapComplete: false,
      manifest: { valid: false, version: null },
      missing: ["agent-workspace/memory/daily"],
    });
    expect(readFileSync(join(rootOf(t), "system/tool-policy.md"), "utf8")).toBe("mine");
  });

  test("a symlinked section is not followed when bootstrapping (nothing is created outside)", async () => {
    t = await createTestApp();
    const outside = join(t.dataDir, "outside");
    mkdirSync(outside);
    mkdirSync(rootOf(t), { recursive: true });
    symlinkSync(outside, join(rootOf(t), "memory"));
    const health = await t.json<Record<string, any>>("/api/workspace/health");
    expect(health.body.missing).toEqual(
      expect.arrayContaining(["agent-workspace/memory", "agent-workspace/memory/daily"]),
    );
    expect(readdirSync(outside)).toEqual([]);
  });
});

describe("tree and file", () => {
  test("the tree lists contract names, folders first, symlinks as files (not followed)", async () => {
    t = await createTestApp();
    await t.request("/api/workspace/health");
    put(t, "memory/project/b.md", "b");
    put(t, "memory/project/a.md", "a");
    put(t, "stray.txt", "not part of the contract");
    symlinkSync("/etc", join(rootOf(t), "memory", "etc-link"));
    const { status, body } = await t.json<{ root: string; nodes: any[]; diagnostics: string[] }>(
      "/api/workspace/tree",
    );
    expect(status).toBe(200);
    expect(body.root).toBe("agent-workspace");
    const names = body.nodes.map((n) => n.name);
    expect(names).not.toContain("stray.txt");
    expect(body.diagnostics.join()).toContain("stray.txt");
    expect(names.indexOf("artifacts")).toBeLessThan(names.indexOf("manifest.json"));
    const memory = body.nodes.find((n) => n.name === "memory");
    const project = memory.children.find((n: any) => n.name === "project");
    expect(project.children.map((n: any) => n.path)).toEqual([
      "agent-workspace/memory/project/a.md",
      "agent-workspace/memory/project/b.md",
    ]);
    const link = memory.children.find((n: any) => n.name === "etc-link");
    expect(link).toEqual({ name: "etc-link", path: "agent-workspace/memory/etc-link", type: "file" });
  });

  test("file never opens a special file for real: a FIFO's waiting writer is not let through", async () => {
    t = await createTestApp();
    await t.request("/api/workspace/health");
    const fifo = join(rootOf(t), "memory", "pipe");
    Bun.spawnSync(["mkfifo", fifo]);
    const marker = join(rootOf(t), "..", "writer-got-through");
    // The writer blocks in open() until someone opens the FIFO for reading (a device's driver, likewise,
    // runs on open): the route must refuse it without that open.
    const writer = Bun.spawn(["sh", "-c", 'exec 3>"$1"; touch "$2"', "w", fifo, marker]);
    try {
      const response = await t.json("/api/workspace/file?path=agent-workspace/memory/pipe");
      expect(response.status).toBe(403);
      // An observation window: the writer would finish at once if the FIFO had been opened.
      await Bun.sleep(300);
      expect(existsSync(marker)).toBe(false);
    } finally {
      writer.kill();
      await writer.exited;
    }
  });

  test("file reads canonical paths and refuses everything else with the reference client's texts", async () => {
    t = await createTestApp();
    await t.request("/api/workspace/health");
    put(t, "memory/project/decisions.md", "# Decisions\n");
    put(t, "artifacts/big.txt", "x".repeat(300 * 1024));
    put(t, "artifacts/blob.bin", Buffer.from([1, 0, 2]));
    writeFileSync(join(t.dataDir, "secret.txt"), "host secret");
    symlinkSync(join(t.dataDir, "secret.txt"), join(rootOf(t), "memory", "escape.md"));
    symlinkSync(join(rootOf(t), "memory/project/decisions.md"), join(rootOf(t), "memory", "inside.md"));
    Bun.spawnSync(["mkfifo", join(rootOf(t), "memory", "pipe")]);

    const read = (path?: string) =>
      t?.json<Record<string, any>>(
        `/api/workspace/file${path === undefined ? "" : `?path=${encodeURIComponent(path)}`}`,
      );
    expect((await read("agent-workspace/memory/project/decisions.md"))?.body).toEqual({
      path: "agent-workspace/memory/project/decisions.md",
      name: "decisions.md",
      content: "# Decisions\n",
      mediaType: "text/markdown",
      size: 12,
      status: "ok",
    });
    expect((await read("agent-workspace/memory/inside.md"))?.body.content).toBe("# Decisions\n");
    expect((await read("agent-workspace/artifacts/big.txt"))?.body).toMatchObject({
      status: "too-large",
      content: "",
    });
    expect((await read("agent-workspace/artifacts/blob.bin"))?.body).toMatchObject({
      status: "unsupported",
      mediaType: "application/octet-stream",
    });
    const refusals: [string | undefined, number, string][] = [
      [undefined, 400, "Missing workspace file path."],
      ["/etc/passwd", 400, "Workspace file path must be project-relative."],
      ["agent-workspace/../secret.txt", 403, "Workspace file path is outside agent-workspace."],
      ["files/x.txt", 403, "Workspace file path is outside agent-workspace."],
      ["agent-workspace", 400, "Workspace path is a directory. Provide a path to a specific file."],
      ["agent-workspace/memory", 400, "Workspace path is not a file."],
      ["agent-workspace/memory/nothing.md", 404, "Workspace file was not found."],
      ["agent-workspace/memory/escape.md", 403, "Workspace file path is outside agent-workspace."],
      ["agent-workspace/memory/pipe", 403, "Workspace file path validation failed."],
    ];
    for (const [path, status, message] of refusals) {
      const response = await read(path);
      expect({ path, status: response?.status, body: response?.body }).toEqual({
        path,
        status,
        body: { message },
      });
    }
  });
});

describe("projection", () => {
  test("reindex builds the FTS5 projection without touching canonical files; items, item and search read it", async () => {
    t = await createTestApp();
    await t.request("/api/workspace/health");
    put(
      t,
      "memory/project/decisions.md",
      "# Decisions\n\nWe chose SQLite full-text search for the workspace.\n",
    );
    put(t, "plans/active/launch.md", "# Launch plan\n\nShip the beta on Friday.\n");
    const before = canonicalDigest(rootOf(t));
    const first = await t.json<Record<string, any>>("/api/workspace/reindex", postJson({}));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ ok: true, outcome: "complete", counts: { deleted: 0, updated: 0 } });
    expect(first.body.counts.inserted).toBeGreaterThanOrEqual(7);
    expect(canonicalDigest(rootOf(t))).toBe(before);
    expect(statSync(join(rootOf(t), "indexes", "workspace-projection.sqlite")).isFile()).toBe(true);

    const hits = await t.json<{ hits: any[] }>("/api/workspace/search?q=full-text%20search");
    expect(hits.body.hits[0]).toMatchObject({
      canonicalPath: "agent-workspace/memory/project/decisions.md",
      title: "Decisions",
      category: "memory",
    });
    expect(hits.body.hits[0].snippet).toContain("full-text search");
    const items = await t.json<{ items: any[]; total: number }>("/api/workspace/items");
    const launch = items.body.items.find((i) => i.canonicalPath === "agent-workspace/plans/active/launch.md");
    expect(launch).toMatchObject({ category: "plan", parserKind: "markdown", currentVersionNumber: 1 });
    const item = await t.json<Record<string, any>>(`/api/workspace/item?id=${launch.id}`);
    expect(item.body.item.content).toContain("Ship the beta");

    put(t, "plans/active/launch.md", "# Launch plan\n\nShip the beta on Monday.\n");
    rmSync(join(rootOf(t), "memory/project/decisions.md"));
    const second = await t.json<Record<string, any>>("/api/workspace/reindex", postJson({}));
    expect(second.body.counts).toMatchObject({ updated: 1, deleted: 1, inserted: 0 });
    const after = await t.json<Record<string, any>>(`/api/workspace/item?id=${launch.id}`);
    expect(after.body.item).toMatchObject({ currentVersionNumber: 2, id: launch.id });
    expect((await t.json<{ hits: any[] }>("/api/workspace/search?q=decisions")).body.hits).toEqual([]);
    expect((await t.request("/api/workspace/item?id=nope")).status).toBe(404);
    expect((await t.request("/api/workspace/item")).status).toBe(400);
    expect((await t.request("/api/workspace/search?q=%20")).status).toBe(400);
    // FTS5 syntax in a query is text, never an error.
    expect(
      (await t.request(`/api/workspace/search?q=${encodeURIComponent('"a" OR NEAR(b*) -c:')}`)).status,
    ).toBe(200);
  });

  test("versions are kept: a change adds a version with its text, a file that returns keeps its history", async () => {
    t = await createTestApp();
    await t.request("/api/workspace/health");
    const sha = (text: string) => createHash("sha256").update(text).digest("hex");
    const v1 = "# Launch plan\n\nShip the beta on Friday.\n";
    const v2 = "# Launch plan\n\nShip the beta on Monday.\n";
    put(t, "plans/active/launch.md", v1);
    await t.request("/api/workspace/reindex", postJson({}));
    const id = (await t.json<{ items: any[] }>("/api/workspace/items")).body.items.find(
      (i) => i.canonicalPath === "agent-workspace/plans/active/launch.md",
    ).id;
    const first = (await t.json<Record<string, any>>(`/api/workspace/item?id=${id}`)).body.item;
    expect(first.version).toMatchObject({
      versionNumber: 1,
      parserVersion: 1,
      contentHash: sha(v1),
      contentText: v1,
    });
    expect(first).toMatchObject({ currentVersionNumber: 1, currentParserVersion: 1 });

    put(t, "plans/active/launch.md", v2);
    await t.request("/api/workspace/reindex", postJson({}));
    // Unchanged content adds no version.
    await t.request("/api/workspace/reindex", postJson({}));
    const second = (await t.json<Record<string, any>>(`/api/workspace/item?id=${id}`)).body.item;
    expect(second.version).toMatchObject({ versionNumber: 2, contentHash: sha(v2), contentText: v2 });
    expect(second.versions.map((v: any) => [v.versionNumber, v.contentHash])).toEqual([
      [2, sha(v2)],
      [1, sha(v1)],
    ]);
    expect(second.versions[0].contentText).toBeUndefined();

    rmSync(join(rootOf(t), "plans/active/launch.md"));
    await t.request("/api/workspace/reindex", postJson({}));
    expect((await t.request(`/api/workspace/item?id=${id}`)).status).toBe(404);
    put(t, "plans/active/launch.md", v1);
    const back = await t.json<Record<string, any>>("/api/workspace/reindex", postJson({}));
    expect(back.body.counts.reactivated).toBe(1);
    const third = (await t.json<Record<string, any>>(`/api/workspace/item?id=${id}`)).body.item;
    expect(third.id).toBe(id);
    expect(third.versions.map((v: any) => v.versionNumber)).toEqual([3, 2, 1]);
    expect(third.version).toMatchObject({ versionNumber: 3, contentText: v1 });
  });

  test("a projection built before versions were kept gets its current content as the recorded version", async () => {
    t = await createTestApp();
    await t.request("/api/workspace/health");
    put(t, "memory/notes.md", "# Notes\n\nolder projection\n");
    await t.request("/api/workspace/reindex", postJson({}));
    const file = join(rootOf(t), "indexes", "workspace-projection.sqlite");
    const db = new Database(file);
    db.run("DROP TABLE item_versions");
    db.close();
    const id = (await t.json<{ items: any[] }>("/api/workspace/items")).body.items.find(
      (i) => i.canonicalPath === "agent-workspace/memory/notes.md",
    ).id;
    const item = await t.json<Record<string, any>>(`/api/workspace/item?id=${id}`);
    expect(item.status).toBe(200);
    expect(item.body.item.version).toMatchObject({
      versionNumber: 1,
      contentText: "# Notes\n\nolder projection\n",
    });
  });

  test("items and search build the projection on first use", async () => {
    t = await createTestApp();
    put(t, "memory/research/notes.md", "# Notes\n\nzebra migration patterns\n");
    const hits = await t.json<{ total: number }>("/api/workspace/search?q=zebra");
    expect(hits.body.total).toBe(1);
  });
});

describe("protected deployments", () => {
  test("each user has their own workspace: another user's files and items are invisible", async () => {
    t = await authApp();
    const ann = await signUp(t, "ann@example.org");
    const bob = await signUp(t, "bob@example.org");
    put(t, "memory/project/ann.md", "# Ann\n\nannsecret\n", ann.id);
    const path = "?path=agent-workspace/memory/project/ann.md";
    expect((await t.request(`/api/workspace/file${path}`, { headers: ann.bearer })).status).toBe(200);
    expect((await t.request(`/api/workspace/file${path}`, { headers: bob.bearer })).status).toBe(404);
    const annHits = await t.json<{ hits: { id: string }[] }>("/api/workspace/search?q=annsecret", {
      headers: ann.bearer,
    });
    expect(annHits.body.hits.length).toBe(1);
    const bobHits = await t.json<{ total: number }>("/api/workspace/search?q=annsecret", {
      headers: bob.bearer,
    });
    expect(bobHits.body.total).toBe(0);
    const id = annHits.body.hits[0]?.id as string;
    expect((await t.request(`/api/workspace/item?id=${id}`, { headers: bob.bearer })).status).toBe(404);
    expect((await t.request("/api/workspace/tree")).status).toBe(401);
  });

  test("reindex: CSRF token from GET, same-origin header and cookie; bearer callers skip it", async () => {
    t = await authApp();
    const ann = await signUp(t, "ann@example.org");
    const bob = await signUp(t, "bob@example.org");
    const get = await t.request("/api/workspace/reindex", { headers: ann.cookie });
    expect(get.status).toBe(200);
    const { csrfToken } = await get.json();
    const cookie = get.headers.get("set-cookie") ?? "";
    expect(cookie).toStartWith(`app_csrf=${csrfToken};`);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    const bobToken = (await (await t.request("/api/workspace/reindex", { headers: bob.cookie })).json())
      .csrfToken;
    expect(bobToken).not.toBe(csrfToken);

    const post = (headers: Record<string, string>) =>
      t?.request("/api/workspace/reindex", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: "{}",
      });
    const withCookies = (token: string, cookieToken = token) => ({
      ...OWN_ORIGIN,
      cookie: `${ann.cookie.cookie}; app_csrf=${cookieToken}`,
      "x-app-csrf-token": token,
    });
    const invalid = [
      { ...OWN_ORIGIN, ...ann.cookie },
      withCookies(csrfToken, "other"),
      withCookies(bobToken),
      withCookies("forged", "forged"),
    ];
    for (const headers of invalid) {
      const response = await post(headers);
      expect(response?.status).toBe(403);
      expect(await response?.json()).toEqual({ message: "Invalid CSRF protection" });
    }
    expect((await post(withCookies(csrfToken)))?.status).toBe(200);
    expect((await post(ann.bearer))?.status).toBe(200);
  });

  test("five reindexes per minute per user, then 429 with Retry-After: 60; refused attempts do not count", async () => {
    t = await authApp();
    const ann = await signUp(t, "ann@example.org");
    const bob = await signUp(t, "bob@example.org");
    const post = (headers: Record<string, string>) =>
      t?.request("/api/workspace/reindex", postJson({}, headers));
    for (let i = 0; i < 3; i++) expect((await post({ ...OWN_ORIGIN, ...ann.cookie }))?.status).toBe(403);
    for (let i = 0; i < 5; i++) expect((await post(ann.bearer))?.status).toBe(200);
    const limited = await post(ann.bearer);
    expect(limited?.status).toBe(429);
    expect(limited?.headers.get("retry-after")).toBe("60");
    expect(await limited?.json()).toEqual({ message: "Workspace reindex rate limit exceeded" });
    expect((await post(bob.bearer))?.status).toBe(200);
  });
});
