/**
 * The turn's event log on the database port (either engine: ATRIUM_TEST_DATABASE=postgres runs it on
 * PostgreSQL): events are written in batches, not one statement each; the commit's transaction writes
 * what is still queued with the outcome; the terminal event reaches the readers only after that
 * transaction commits, and not at all when it fails. And two first attempts with one Idempotency-Key
 * racing each other make one run.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Db, Tx } from "../../server/storage/db/port.ts";
import { LiveRun } from "../../server/turns/runtime/live-run.ts";
import { EVENT_BATCH, turnRecorder } from "../../server/turns/services/turn-recorder.ts";
import { TurnRunStore } from "../../server/turns/stores/runs.ts";
import { TurnSessionStore } from "../../server/turns/stores/sessions.ts";
import type { TestApp } from "../helpers/app.ts";
import { createSession, runTurn, turnsApp } from "../helpers/turns.ts";

setDefaultTimeout(120_000);

let t: TestApp;
beforeAll(async () => {
  t = await turnsApp();
});
afterAll(() => t.close());

/** The app's database, counting the statements that write the event log (in or out of a transaction). */
function counting(db: Db): { db: Db; eventInserts: () => number } {
  let inserts = 0;
  const count = (sql: string) => {
    if (sql.startsWith("INSERT INTO turn_events")) inserts++;
  };
  const countedTx = (tx: Tx): Tx => ({
    all: (sql, params) => tx.all(sql, params),
    get: (sql, params) => tx.get(sql, params),
    exec: (sql) => tx.exec(sql),
    tx: (fn) => tx.tx((inner) => fn(countedTx(inner))),
    afterCommit: (cb) => tx.afterCommit(cb),
    run: (sql, params) => {
      count(sql);
      return tx.run(sql, params);
    },
  });
  const counted: Db = {
    engine: db.engine,
    dialect: db.dialect,
    all: (sql, params) => db.all(sql, params),
    get: (sql, params) => db.get(sql, params),
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
    tx: (fn) => db.tx((tx) => fn(countedTx(tx))),
    run: (sql, params) => {
      count(sql);
      return db.run(sql, params);
    },
  };
  return { db: counted, eventInserts: () => inserts };
}

/** A claimed run with its recorder over the (counting) database. */
async function claimedRun() {
  const { db, eventInserts } = counting(t.ctx.database);
  const runs = new TurnRunStore(db);
  const sessionId = `ses_${crypto.randomUUID().replaceAll("-", "")}`;
  await new TurnSessionStore(db).create("local", sessionId, "log");
  const id = `run_${crypto.randomUUID().replaceAll("-", "")}`;
  const claimed = await runs.claim({
    id,
    owner_id: "local",
    session_id: sessionId,
    idempotency_key: crypto.randomUUID(),
    fingerprint: "f",
    input_json: "{}",
  });
  expect(claimed).toBe(true);
  const live = new LiveRun(id, "local", sessionId);
  const recorder = turnRecorder(
    { runs, tracer: t.family("turns").runtime.tracer, rlm: t.ctx.config.policy.settings.rlm },
    { run: { id, owner_id: "local", session_id: sessionId }, live, traceId: null },
  );
  const stored = async () =>
    (
      await t.ctx.database.all<{ seq: number; type: string }>(
        "SELECT seq, type FROM turn_events WHERE run_id = ? ORDER BY seq",
        [id],
      )
    ).map((r) => `${r.seq}:${r.type}`);
  const committed = async () =>
    (await t.ctx.database.get<{ committed: number }>("SELECT committed FROM turn_runs WHERE id = ?", [id]))
      ?.committed;
  return { id, runs, live, recorder, stored, committed, eventInserts };
}

const warning = (i: number) => ({ type: "warning" as const, message: `event ${i}`, code: "test" });
const finish = {
  type: "turn_finish" as const,
  finishReason: "stop" as const,
  status: "completed" as const,
  checkpointVersion: 1,
  durationMs: 1,
  traceId: null,
};

describe("the turn's event log", () => {
  test("written in batches: 45 events and the terminal one take a handful of INSERTs, all stored in order", async () => {
    const { id, runs, live, recorder, stored, eventInserts } = await claimedRun();
    // As a turn emits: one event at a time, the event loop turning between them.
    for (let i = 0; i < 45; i++) {
      recorder.emit(warning(i));
      await Bun.sleep(0);
    }
    // The readers have every event at once; the log catches up in batches.
    expect(live.events).toHaveLength(45);
    await recorder.commit(async (tx) => {
      await runs.commit(id, { status: "completed", parts: [], usage: null, durationMs: 1 }, tx);
      recorder.emit(finish);
    });
    const rows = await stored();
    expect(rows).toEqual([...Array.from({ length: 45 }, (_, i) => `${i}:warning`), "45:turn_finish"]);
    // One INSERT per event would be 46 (a batch timer firing on a slow machine may add one or two).
    expect(eventInserts()).toBeGreaterThan(0);
    expect(eventInserts()).toBeLessThanOrEqual(Math.ceil(46 / EVENT_BATCH) + 4);
  });

  test("a few events wait at most a moment for their batch; a flush writes them at once", async () => {
    const { recorder, stored } = await claimedRun();
    recorder.emit(warning(0));
    recorder.emit(warning(1));
    await recorder.flush();
    expect(await stored()).toEqual(["0:warning", "1:warning"]);
    recorder.emit(warning(2));
    // No commit, no flush: the batch timer writes it (the log of a running turn is durable soon).
    for (let i = 0; i < 100 && (await stored()).length < 3; i++) await Bun.sleep(20);
    expect(await stored()).toEqual(["0:warning", "1:warning", "2:warning"]);
  });

  test("the terminal event reaches the readers after its transaction commits", async () => {
    const { id, runs, live, recorder, stored, committed } = await claimedRun();
    recorder.emit(warning(0));
    let seenInside: string[] = [];
    await recorder.commit(async (tx) => {
      await runs.commit(id, { status: "completed", parts: [], usage: null, durationMs: 1 }, tx);
      recorder.emit(finish);
      seenInside = live.events.map((e) => e.type);
    });
    expect(seenInside).toEqual(["warning"]);
    expect(live.events.map((e) => e.type)).toEqual(["warning", "turn_finish"]);
    expect(live.finished).toBe(true);
    expect(await committed()).toBe(1);
    expect(await stored()).toEqual(["0:warning", "1:turn_finish"]);
  });

  test("a commit that fails delivers and stores nothing of its outcome; the next one does", async () => {
    const { id, runs, live, recorder, stored, committed } = await claimedRun();
    recorder.emit(warning(0));
    const failing = recorder.commit(async (tx) => {
      await runs.commit(id, { status: "completed", parts: [], usage: null, durationMs: 1 }, tx);
      recorder.emit(finish);
      throw new Error("the commit failed");
    });
    expect(failing).rejects.toThrow("the commit failed");
    await failing.catch(() => {});
    expect(live.events.map((e) => e.type)).toEqual(["warning"]);
    expect(live.finished).toBe(false);
    expect(await committed()).toBe(0);
    expect((await stored()).some((r) => r.endsWith("turn_finish"))).toBe(false);

    await recorder.commit(async (tx) => {
      await runs.commit(
        id,
        { status: "failed", parts: [], usage: null, errorCode: "x", errorMessage: "x", durationMs: 1 },
        tx,
      );
      recorder.emit({ type: "turn_error", message: "failed", code: "execution_failed", durationMs: 1 });
    });
    expect(live.events.map((e) => e.type)).toEqual(["warning", "turn_error"]);
    expect(await committed()).toBe(1);
    expect(await stored()).toEqual(["0:warning", "2:turn_error"]);
  });
});

describe("idempotent turns", () => {
  test("two claims of one key at once: one wins, the other is refused (not an error)", async () => {
    const runs = new TurnRunStore(t.ctx.database);
    const session = await createSession(t);
    const claim = (key: string) =>
      runs.claim({
        id: `run_${crypto.randomUUID().replaceAll("-", "")}`,
        owner_id: "local",
        session_id: session,
        idempotency_key: key,
        fingerprint: "f",
        input_json: "{}",
      });
    const key = crypto.randomUUID();
    const outcomes = await Promise.all([claim(key), claim(key), claim(key)]);
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    // Another key while that run holds the session: refused too (one running turn per session).
    expect(await claim(crypto.randomUUID())).toBe(false);
    const rows = await t.ctx.database.all("SELECT id FROM turn_runs WHERE session_id = ?", [session]);
    expect(rows).toHaveLength(1);
  });

  test("two first attempts with one key at once make one run; the other is told it is running or follows it", async () => {
    const session = await createSession(t);
    const key = crypto.randomUUID();
    const body = { text: "```python\nprint('once')\n```" };
    const [a, b] = await Promise.all([runTurn(t, session, body, key), runTurn(t, session, body, key)]);
    const rows = await t.ctx.database.all<{ id: string }>(
      "SELECT id FROM turn_runs WHERE session_id = ? AND idempotency_key = ?",
      [session, key],
    );
    expect(rows).toHaveLength(1);
    for (const { events } of [a, b]) {
      const start = events.find((e) => e.type === "turn_start");
      if (start) expect(start.runId).toBe(rows[0]?.id);
      else expect(events.find((e) => e.type === "turn_error")?.code).toBe("turn_already_running");
    }
    expect([a, b].some(({ events }) => events.at(-1)?.status === "completed")).toBe(true);
  });
});
