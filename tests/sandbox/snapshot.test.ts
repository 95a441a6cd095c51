/**
 * Interpreters from the memory snapshot (server/sandbox/snapshot.ts), in the real jail: the snapshot is
 * made once in its cache folder and every interpreter starts from it; each draws its own random numbers;
 * the snapshot holds nothing a user's code did; the environment and the jail are what a start from
 * scratch sees, with no descriptor of the snapshot left and no path of its folder shown; an altered file
 * is never loaded (made again), a snapshot pyodide refuses falls back to a start from scratch, and the key
 * names what shapes the snapshot; a start takes the faster paths of pyodide-start.ts; a pool closed while
 * its snapshot is being made kills the maker.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Interpreter } from "../../server/sandbox/interpreter.ts";
import { InterpreterPool, type InterpreterPoolOptions } from "../../server/sandbox/interpreter-pool.ts";
import { pyodideVersion } from "../../server/sandbox/isolation.ts";
import { SnapshotCache, snapshotKey } from "../../server/sandbox/snapshot.ts";
import { viaJs } from "../helpers/jail.ts";
import { tempDir } from "../helpers/tmp.ts";
import { processGone, waitFor } from "../helpers/wait.ts";

setDefaultTimeout(300_000);

const cache = tempDir("atrium-snapshot-test-");
const pools: InterpreterPool[] = [];
afterAll(() => {
  for (const pool of pools) pool.close();
  cache.remove();
});

interface Logged {
  level: "info" | "warn";
  msg: string;
}

function pool(options: InterpreterPoolOptions = {}) {
  const logged: Logged[] = [];
  const log = {
    info: (msg: string) => logged.push({ level: "info", msg }),
    warn: (msg: string) => logged.push({ level: "warn", msg }),
  };
  const p = new InterpreterPool({ warm: 0, snapshotDir: cache.path, log, ...options });
  pools.push(p);
  return { pool: p, logged };
}

async function run(py: Interpreter, code: string): Promise<string> {
  const result = await py.run(code, { timeoutMs: 60_000 });
  if (result.error) throw new Error(result.error);
  return result.stdout.trim();
}

async function opened(p: InterpreterPool): Promise<Interpreter> {
  const py = await p.acquire();
  await py.init(["read_file"], { context: "the bound text" }, 20_000);
  return py;
}

const files = () => readdirSync(cache.path).filter((n) => n.startsWith("pyodide-"));

describe("interpreters from the snapshot", () => {
  test("made once in its cache folder; every interpreter starts from it, in the jail, tools working", async () => {
    const first = pool();
    expect(first.pool.isolation).toBe("bubblewrap");
    const a = await opened(first.pool);
    expect(a.startStats?.snapshot).toBe(true);
    expect(first.logged.filter((l) => l.msg.includes("made the interpreters' snapshot"))).toHaveLength(1);
    const made = files();
    expect(made.filter((n) => n.endsWith(".bin"))).toHaveLength(1);
    expect(made.filter((n) => n.endsWith(".json"))).toHaveLength(1);
    const out = await a.run("print(context)\nprint(read_file('x.txt'))", {
      timeoutMs: 60_000,
      onToolCall: async (name, args) => `${name}:${args[0]}`,
    });
    expect(out.stdout).toBe("the bound text\nread_file:x.txt\n");
    first.pool.release(a);

    // A second pool (a restart) finds it: nothing is made again.
    const second = pool();
    const b = await opened(second.pool);
    expect(b.startStats?.snapshot).toBe(true);
    expect(second.logged).toEqual([]);
    expect(files()).toEqual(made);
    second.pool.release(b);
  });

  test("a start from the snapshot takes the faster paths of pyodide-start.ts, in the jail", async () => {
    const { pool: p } = pool();
    const py = await opened(p);
    const report = py.startStats?.report;
    expect(py.startStats?.snapshot).toBe(true);
    // The runtime compiled from the worker's start and handed to pyodide; the Emscripten module untranspiled.
    expect(report?.earlyCompile).toBe(true);
    expect(report?.untranspiled).toBe(true);
    // Its function table grown and its memory restored in bulk (emscripten-patches.ts).
    expect(report?.patched).toEqual(["table", "restore"]);
    expect(report && report.workerMs <= report.loadedMs && report.loadedMs <= report.readyMs).toBe(true);
    expect(await run(py, "print(sum(range(10)))")).toBe("45");
    p.release(py);
  });

  test("each interpreter draws its own random numbers", async () => {
    const { pool: p } = pool();
    const draws: string[] = [];
    for (let i = 0; i < 2; i++) {
      const py = await opened(p);
      expect(py.startStats?.snapshot).toBe(true);
      draws.push(await run(py, "import random\nprint(random.random(), random.getrandbits(64))"));
      p.release(py);
    }
    expect(draws[0]).not.toBe(draws[1]);
  });

  test("the snapshot holds nothing a user's code did; the next interpreter starts clean", async () => {
    const { pool: p } = pool();
    const marker = `marker-${crypto.randomUUID()}`;
    const one = await opened(p);
    await run(one, `secret = "${marker}"\nopen("/tmp/left.txt", "w").write(secret)\nprint(secret)`);
    p.release(one);
    const two = await opened(p);
    expect(await run(two, "import os\nprint('secret' in globals(), os.path.exists('/tmp/left.txt'))")).toBe(
      "False False",
    );
    p.release(two);
    for (const name of files()) expect(readFileSync(join(cache.path, name)).includes(marker)).toBe(false);
  });

  test("the environment is a cold start's; the descriptor is closed and the cache folder is not shown", async () => {
    const { pool: p } = pool();
    const py = await opened(p);
    expect(py.startStats?.snapshot).toBe(true);
    const environ = JSON.parse(await run(py, "import os, json\nprint(json.dumps(sorted(os.environ)))"));
    expect(environ).toEqual([
      "HOME",
      "LANG",
      "LD_LIBRARY_PATH",
      "LOGNAME",
      "PATH",
      "PWD",
      "PYTHONINSPECT",
      "USER",
    ]);
    const seen = JSON.parse(
      await run(
        py,
        viaJs(`const fs = process.getBuiltinModule("fs");
const links = fs.readdirSync("/proc/self/fd").map((n) => { try { return fs.readlinkSync("/proc/self/fd/" + n); } catch { return ""; } });
return { links, mounts: fs.readFileSync("/proc/self/mountinfo", "utf8"), environ: fs.readFileSync("/proc/self/environ", "latin1") };`),
      ),
    ) as { links: string[]; mounts: string; environ: string };
    expect(seen.links.filter((l) => l.includes("pyodide-"))).toEqual([]);
    expect(seen.mounts).not.toContain(cache.path);
    expect(seen.environ.split("\0").filter(Boolean)).toEqual(["PWD=/scratch"]);
    p.release(py);
  });

  test("an altered snapshot is never loaded: it is made again", async () => {
    const { pool: p, logged } = pool();
    const before = await opened(p);
    p.release(before);
    const [bin] = files().filter((n) => n.endsWith(".bin"));
    const path = join(cache.path, bin as string);
    const bytes = readFileSync(path);
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] ?? 0) ^ 0xff;
    writeFileSync(path, bytes);
    // This pool checked the file before: it notices the change, and a new one is made.
    const after = await opened(p);
    expect(after.startStats?.snapshot).toBe(true);
    expect(logged.map((l) => l.msg)).toContain(
      "the interpreters' snapshot changed on disk; checking it again",
    );
    expect(logged.map((l) => l.msg)).toContain("made the interpreters' snapshot");
    p.release(after);
    // A new pool does not take the altered file either: the manifest names the new one.
    const manifest = JSON.parse(
      readFileSync(join(cache.path, files().find((n) => n.endsWith(".json")) as string), "utf8"),
    ) as { file: string };
    expect(manifest.file).not.toBe(bin);
  });

  test("a snapshot pyodide refuses (another build) falls back to a start from scratch, once", async () => {
    const other = tempDir("atrium-snapshot-refused-");
    try {
      const real = readFileSync(join(cache.path, files().find((n) => n.endsWith(".bin")) as string));
      // The header's build id (bytes 16-48) of another pyodide build: valid hash, refused by pyodide.
      real.fill(0xab, 16, 48);
      new SnapshotCache(other.path, pyodideVersion()).store(real);
      const { pool: p, logged } = pool({ snapshotDir: other.path });
      const py = await opened(p);
      expect(py.startStats?.snapshot).toBe(false);
      expect(await run(py, "print(1 + 1)")).toBe("2");
      p.release(py);
      expect(logged.map((l) => l.msg)).toContain(
        "an interpreter could not start from the snapshot; starting from scratch from now on",
      );
    } finally {
      other.remove();
    }
  });

  test("a pool closed while its snapshot is being made kills the maker: nothing left running or written", async () => {
    const fresh = tempDir("atrium-snapshot-closed-");
    try {
      const { pool: p, logged } = pool({ snapshotDir: fresh.path });
      const warming = p.warm();
      const pid = await waitFor(() => p.snapshotMakerPid, { timeoutMs: 60_000 });
      p.close();
      await warming;
      // Killed, not left to finish for nobody (it ran on after a server's SIGTERM, for seconds of CPU).
      await waitFor(() => processGone(pid), { timeoutMs: 10_000 });
      expect(readdirSync(fresh.path).filter((n) => n.startsWith("pyodide-"))).toEqual([]);
      expect(logged).toEqual([]);
    } finally {
      fresh.remove();
    }
  });

  test("the key names what shapes the snapshot", () => {
    expect(snapshotKey("314.0.7")).toBe(snapshotKey("314.0.7"));
    expect(snapshotKey("314.0.7")).not.toBe(snapshotKey("314.0.8"));
    const a = new SnapshotCache(cache.path, "314.0.7");
    const b = new SnapshotCache(cache.path, "314.0.8");
    expect(a.key).not.toBe(b.key);
    expect(new SnapshotCache(cache.path, "314.0.8").find()).toBeUndefined();
  });
});
