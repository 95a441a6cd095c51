/**
 * Warm sandbox pools shared by the turns tests' apps (turns.ts), for the whole test run: one pool per
 * pool configuration (ceiling, warm count, limits, start deadline, child slot). Every turn takes a fresh
 * interpreter and a pyodide start costs seconds of CPU, so an app (or the next test file) that finds a
 * pool warm starts its first turn at once, and no file ends by killing an interpreter it just warmed.
 * A few unused pools stay open (the least recently used beyond that close); the run's global afterAll
 * (preload.ts) closes the rest. Imports no server code: the preload stays light for every test run.
 *
 * Every test app and server process of a run (and of runs beside it) starts its interpreters from one
 * snapshot cache, TEST_SNAPSHOT_DIR, instead of its own data dir's: the snapshot is made once, not once
 * per temp data dir. Tests of the snapshot's own making give a folder of their own.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { InterpreterPool, InterpreterPoolOptions } from "../../server/sandbox/interpreter-pool.ts";

/** The snapshot cache the tests' apps and server processes share (APP_SANDBOX_SNAPSHOT_DIR). */
export const TEST_SNAPSHOT_DIR = join(tmpdir(), "atrium-test-snapshots");

/** Unused pools kept open for a later app; beyond this the least recently used closes. */
const KEPT_UNUSED = 2;

interface SharedPool {
  key: string;
  pool: InterpreterPool;
  users: number;
  lastUsed: number;
}

const pools = new Map<string, SharedPool>();

/** The shared pool of this configuration (made with `create` the first time); `giveBack` when done. */
export function borrowPool(
  options: InterpreterPoolOptions,
  create: (options: InterpreterPoolOptions) => InterpreterPool,
): { pool: InterpreterPool; giveBack(): void } {
  // Paths kept out of the jail matter only inside the checkout, where a sharing app's data dir never is;
  // the snapshot cache and the logger are the first app's.
  const { keepOut: _keepOut, snapshotDir: _snapshotDir, log: _log, ...configuration } = options;
  const key = JSON.stringify(configuration);
  let shared = pools.get(key);
  if (!shared) {
    shared = { key, pool: create(options), users: 0, lastUsed: 0 };
    pools.set(key, shared);
  }
  const entry = shared;
  entry.users++;
  let given = false;
  return {
    pool: entry.pool,
    giveBack() {
      if (given) return;
      given = true;
      entry.users--;
      entry.lastUsed = performance.now();
      closeUnusedBeyond(KEPT_UNUSED);
    },
  };
}

function closeUnusedBeyond(kept: number): void {
  const unused = [...pools.values()].filter((p) => p.users === 0).sort((a, b) => b.lastUsed - a.lastUsed);
  for (const entry of unused.slice(kept)) {
    pools.delete(entry.key);
    entry.pool.close();
  }
}

/** Closes every pool nobody uses (the end of the run: all of them). */
export function closeSharedPools(): void {
  closeUnusedBeyond(0);
}
