/**
 * Every workspace route while the sandbox swaps `agent-workspace/` for a symlink in a loop. The sandbox
 * owns the folder and its processes run in the background, so between a route's check of the folder
 * and its use, the name may lead anywhere: here to a decoy agent workspace outside (its own manifest,
 * files, and a built index), holding a unique marker. The routes open the folder once and resolve
 * everything beneath that descriptor: no response ever shows the decoy, nothing outside changes, and
 * the user's own files are still served between the swaps.
 */
import { afterEach, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withAgentWorkspace, workspaceRoot } from "../../server/chat/workspace/contract.ts";
import { itemId, reindex } from "../../server/chat/workspace/projection.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Swaps `agent-workspace` (in argv[1]) for a symlink to argv[2] and back, forever. */
const RACER = `
const fs = require("node:fs");
const [dir, decoy] = process.argv.slice(-2);
process.chdir(dir);
const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
// A folder the server created in the instant the name was free is removed before the rename is retried.
const into = (from, to) => {
  try { fs.renameSync(from, to); } catch { fs.rmSync(to, { recursive: true, force: true }); fs.renameSync(from, to); }
};
fs.rmSync("l.x", { force: true });
fs.symlinkSync(decoy, "l.x");
for (;;) {
  try {
    fs.renameSync("agent-workspace", "aw.x");
  } catch {
    pause(1);
    continue;
  }
  into("l.x", "agent-workspace");
  pause(1);
  fs.renameSync("agent-workspace", "l.x");
  into("aw.x", "agent-workspace");
  pause(2);
}
`;

const MARKER = `DECOYMARKER${crypto.randomUUID().replaceAll("-", "")}`;

/** Every path and byte under `dir` (files and folders): nothing outside may change. */
function digest(dir: string): string {
  const hash = createHash("sha256");
  const visit = (path: string, rel: string) => {
    for (const name of readdirSync(path).sort()) {
      const full = join(path, name);
      const stat = statSync(full);
      hash.update(`${rel}/${name}\0${stat.isDirectory() ? "dir" : readFileSync(full)}\0`);
      if (stat.isDirectory()) visit(full, `${rel}/${name}`);
    }
  };
  visit(dir, "");
  return hash.digest("hex");
}

test("a sandbox swapping agent-workspace/ for a symlink in a loop never gets any route outside", async () => {
  const app = await createTestApp();
  t = app;
  const root = workspaceRoot(app.dataDir, "local");
  await app.request("/api/workspace/health");
  writeFileSync(join(root, "memory", "note.md"), "# Note\n\ninside words\n");
  await app.request("/api/workspace/reindex", postJson({}));
  // The decoy: a whole agent workspace outside, with the same names, a marker and a built index.
  const decoy = join(app.dataDir, "decoy", "agent-workspace");
  mkdirSync(decoy, { recursive: true });
  withAgentWorkspace(decoy, () => {});
  writeFileSync(join(decoy, "memory", "note.md"), `# ${MARKER}\n\n${MARKER} words\n`);
  writeFileSync(join(decoy, "memory", `${MARKER}.md`), MARKER);
  withAgentWorkspace(decoy, reindex);
  const before = digest(join(app.dataDir, "decoy"));

  // The sandbox's loop, as one process renaming in place (a jail's shell could run the same): the
  // real folder out, a symlink to the decoy in, a millisecond, the link out, the real folder back.
  const racer = Bun.spawn([process.execPath, "-e", RACER, join(root, ".."), decoy], {
    stdout: "ignore",
    stderr: "ignore",
  });
  const id = itemId("agent-workspace/memory/note.md");
  const routes: [string, () => Promise<Response>][] = [
    ["health", () => app.request("/api/workspace/health")],
    ["tree", () => app.request("/api/workspace/tree")],
    ["file", () => app.request("/api/workspace/file?path=agent-workspace/memory/note.md")],
    ["items", () => app.request("/api/workspace/items")],
    ["item", () => app.request(`/api/workspace/item?id=${id}`)],
    ["search", () => app.request(`/api/workspace/search?q=words`)],
    ["reindex", () => app.request("/api/workspace/reindex", postJson({}))],
  ];
  const leaked: string[] = [];
  const served = new Map<string, number>();
  const statuses = new Set<number>();
  let rounds = 0;
  try {
    await Bun.sleep(100);
    for (const until = Date.now() + 5000; Date.now() < until; rounds++) {
      for (const [name, call] of routes) {
        const response = await call();
        const text = await response.text();
        statuses.add(response.status);
        if (text.includes(MARKER)) leaked.push(`${name}: ${text.slice(0, 200)}`);
        if (response.status === 200) served.set(name, (served.get(name) ?? 0) + 1);
      }
    }
  } finally {
    racer.kill();
    await racer.exited;
  }
  expect(leaked).toEqual([]);
  expect(digest(join(app.dataDir, "decoy"))).toBe(before);
  // Never a 500: a swap mid-request is a 503 (or a 404 for a file that was not there).
  expect([...statuses].filter((s) => s >= 500 && s !== 503)).toEqual([]);
  expect(rounds).toBeGreaterThan(20);
  // The user's own files were served between the swaps, by every route.
  for (const [name] of routes) expect([name, (served.get(name) ?? 0) > 0]).toEqual([name, true]);
}, 120_000);

test("a hard link, a named pipe with a writer waiting and a 1 GiB sparse file: refused or capped by every reader", async () => {
  const app = await createTestApp();
  t = app;
  const root = workspaceRoot(app.dataDir, "local");
  await app.request("/api/workspace/health");
  const secret = join(app.dataDir, "host-secret.md");
  writeFileSync(secret, `# ${MARKER}\n`);
  linkSync(secret, join(root, "memory", "linked.md"));
  Bun.spawnSync(["truncate", "-s", "1G", join(root, "memory", "sparse.md")]);
  const fifo = join(root, "memory", "pipe.md");
  Bun.spawnSync(["mkfifo", fifo]);
  const released = join(app.dataDir, "released");
  const writer = Bun.spawn([
    "sh",
    "-c",
    'exec 3>"$1"; printf "%s" "$2" >&3; touch "$3"',
    "w",
    fifo,
    MARKER,
    released,
  ]);
  // The same three in the turns Files API's folder (`files/`, beside agent-workspace/).
  const files = join(root, "..", "files");
  mkdirSync(files, { recursive: true });
  linkSync(secret, join(files, "linked.md"));
  Bun.spawnSync(["truncate", "-s", "1G", join(files, "sparse.md")]);
  try {
    const read = (path: string) =>
      app.json<Record<string, unknown>>(`/api/workspace/file?path=agent-workspace/memory/${path}`);
    expect(await read("linked.md")).toMatchObject({
      status: 403,
      body: { message: "Workspace file path validation failed." },
    });
    expect((await read("sparse.md")).body).toMatchObject({ status: "too-large", content: "", size: 1 << 30 });
    expect((await read("pipe.md")).status).toBe(403);
    const reindexed = await app.request("/api/workspace/reindex", postJson({}));
    expect(reindexed.status).toBe(200);
    const items = await (await app.request("/api/workspace/items")).text();
    const search = await (await app.request(`/api/workspace/search?q=${MARKER.slice(0, 20)}`)).text();
    expect(items).not.toContain("linked.md");
    const turns = [
      await app.request("/api/files/content?path=linked.md"),
      await app.request("/api/files/content?path=sparse.md"),
      await app.request("/api/files/stat?path=linked.md"),
    ];
    expect(turns.map((r) => r.status)).toEqual([409, 413, 409]);
    const answers = [items, search, ...(await Promise.all(turns.map((r) => r.text())))].join("\n");
    expect(answers).not.toContain(MARKER);
    // A writer would finish at once had its pipe been opened for reading.
    await Bun.sleep(300);
    expect(existsSync(released)).toBe(false);
  } finally {
    writer.kill();
    await writer.exited;
  }
}, 60_000);
