/**
 * `npm install` ends by loading the server's start modules (scripts/warm-start.ts, package.json
 * `postinstall`), so Bun's transpiler cache holds them before the first `npm start`: a start after it
 * writes nothing to the cache before `/health/ready`, where a start without it writes every file Bun
 * caches (the writing is most of what made a checkout's first start slower than later ones).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/app.ts";
import { finished, spawn, startServerProcess, waitForOk } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";

/** The cache files after a start of the server reached `/health/ready` with this cache. */
async function cachedAtReady(cache: string): Promise<{ before: string[]; after: string[] }> {
  const before = readdirSync(cache).sort();
  const data = tempDir();
  const server = await startServerProcess(["--port", "0", "--data-dir", data.path], {
    env: { BUN_RUNTIME_TRANSPILER_CACHE_PATH: cache },
  });
  try {
    await waitForOk(`${server.url}/health/ready`, 60_000);
    return { before, after: readdirSync(cache).sort() };
  } finally {
    server.proc.kill("SIGTERM");
    await server.exited;
    data.remove();
  }
}

describe("the install warms the server's first start", () => {
  test("package.json's postinstall runs the warm-up", async () => {
    const pkg = (await Bun.file(join(REPO_ROOT, "package.json")).json()) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.postinstall).toBe("bun scripts/warm-start.ts");
  });

  test("after the warm-up a start writes nothing to the cache; without it, a start writes what it caches", async () => {
    const warmed = tempDir();
    const cold = tempDir();
    try {
      const warmUp = await finished(
        spawn([], {
          entry: join(REPO_ROOT, "scripts", "warm-start.ts"),
          env: { BUN_RUNTIME_TRANSPILER_CACHE_PATH: warmed.path },
        }),
      );
      expect(warmUp.code).toBe(0);
      expect(warmUp.stderr).toBe("");
      const after = await cachedAtReady(warmed.path);
      expect(after.before.length).toBeGreaterThan(0);
      expect(after.after).toEqual(after.before);

      // The premise: a start does write the cache when nothing filled it first.
      const control = await cachedAtReady(cold.path);
      expect(control.before).toEqual([]);
      expect(control.after.length).toBeGreaterThan(0);
    } finally {
      warmed.remove();
      cold.remove();
    }
  });
});
