/**
 * The warm pool follows demand: with none kept warm while no one is active, each owner who starts a turn
 * makes the pool keep one more interpreter started (up to the ceiling), so their next turn finds it
 * ready; once they stop counting as active the surplus is stopped again. Real interpreters, from the
 * tests' shared snapshot cache.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import { TEST_SNAPSHOT_DIR } from "../helpers/sandbox-pools.ts";
import { waitFor } from "../helpers/wait.ts";

setDefaultTimeout(300_000);

const pool = new InterpreterPool({
  warm: 0,
  warmPerOwner: 1,
  warmActiveMs: 15_000,
  max: 3,
  snapshotDir: TEST_SNAPSHOT_DIR,
});
afterAll(() => pool.close());

const settle = { timeoutMs: 120_000 };

test("one warm interpreter per recent active owner, up to the ceiling, stopped again when they go quiet", async () => {
  expect(pool.stats()).toMatchObject({ live: 0, idle: 0 });
  // Owner a's turn: afterwards one interpreter waits, ready, for a's next turn.
  pool.release(await pool.acquire({ owner: "a" }));
  await waitFor(() => pool.readyCount === 1, { ...settle, what: "a warm interpreter for a" });
  // a's next turn takes it without a start of its own.
  const again = await pool.acquire({ owner: "a" });
  expect(again.isReady).toBe(true);
  pool.release(again);
  // b and c become active too: one each, but never beyond the ceiling of 3.
  pool.release(await pool.acquire({ owner: "b" }));
  pool.release(await pool.acquire({ owner: "c" }));
  await waitFor(() => pool.readyCount === 3, { ...settle, what: "three warm interpreters" });
  expect(pool.stats().live).toBeLessThanOrEqual(3);
  // Quiet: once no owner counts as active, the pool falls back to none.
  await waitFor(() => pool.stats().live === 0, { ...settle, what: "the surplus stopped" });
  expect(pool.stats()).toMatchObject({ live: 0, idle: 0 });
}, 180_000);
