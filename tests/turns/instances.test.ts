/**
 * Turns on two instances on one PostgreSQL database (issue 28, items 1 and 2): a retry of a running
 * turn's Idempotency-Key on instance B follows A's run (the events so far, then the live rest, one
 * terminal event); a cancellation sent to B stops it on A; B starting up leaves A's live run alone; and
 * when A stops heartbeating (a crashed instance) its run is failed for a follower on B once its lease
 * lapses, never before. Always on a PostgreSQL database of the run's cluster, whichever half of the suite
 * runs it: one SQLite file has one instance (its in-process path is the rest of tests/turns/).
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sseEvents } from "../../common/streams.ts";
import type { TestApp } from "../helpers/app.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";
import { createSession, type Ev, turnRequest, turnsApp } from "../helpers/turns.ts";
import { waitFor } from "../helpers/wait.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine.
setDefaultTimeout(120_000);

const LEASE_MS = 2000;
const LOOP = { text: "```python\nimport time\nn = 0\nwhile True:\n    n += 1\n    time.sleep(0.05)\n```" };

const apps: TestApp[] = [];
afterEach(async () => {
  // B shares A's data dir, which A removes: the later apps close first.
  for (const app of apps.splice(0).reverse()) await app.close();
});

async function instance(url: string, dataDir?: string): Promise<TestApp> {
  const t = await turnsApp({ dataDir, env: { APP_DATABASE_URL: url, APP_LEASE_MS: String(LEASE_MS) } });
  apps.push(t);
  return t;
}

async function twoInstances(): Promise<[TestApp, TestApp]> {
  const url = await freshPostgresDatabase();
  const a = await instance(url);
  return [a, await instance(url, a.dataDir)];
}

/** A turn stream's contract events, one at a time. */
function follow(response: Response) {
  const frames = sseEvents(response.body as ReadableStream<Uint8Array>);
  const seen: Ev[] = [];
  return {
    seen,
    async until(type: string): Promise<Ev> {
      for (;;) {
        const { value, done } = await frames.next();
        if (done) throw new Error(`ended before ${type}; saw ${seen.map((e) => e.type).join(",")}`);
        if (!value.event) continue;
        const event = JSON.parse(value.data) as Ev;
        seen.push(event);
        if (event.type === type) return event;
      }
    },
    async rest(): Promise<Ev[]> {
      for await (const frame of frames) if (frame.event) seen.push(JSON.parse(frame.data) as Ev);
      return seen;
    },
    cancel: () => frames.return(undefined),
  };
}

const TERMINAL = new Set(["turn_finish", "turn_error", "turn_cancelled"]);
/** The events a follower must see alike: keep-alives are each stream's own. */
const contract = (events: Ev[]) => events.filter((e) => e.type !== "turn_status");

async function startLoop(a: TestApp) {
  const session = await createSession(a);
  const key = crypto.randomUUID();
  const stream = follow(await a.request(`/api/sessions/${session}/turns`, turnRequest(LOOP, key)));
  const start = await stream.until("turn_start");
  await stream.until("code");
  return { session, key, stream, runId: start.runId as string };
}

const runStatus = async (t: TestApp, runId: string) =>
  (await t.ctx.database.get<{ status: string }>("SELECT status FROM turn_runs WHERE id = ?", [runId]))
    ?.status;

describe("a turn among two instances", () => {
  test("a retry on B follows A's run to its end; a cancellation sent to B stops it on A", async () => {
    const [a, b] = await twoInstances();
    const { session, key, stream, runId } = await startLoop(a);
    const follower = follow(await b.request(`/api/sessions/${session}/turns`, turnRequest(LOOP, key)));
    await follower.until("code");
    expect(await runStatus(b, runId)).toBe("running");
    const cancel = await b.request(`/api/runs/${runId}/cancellation`, { method: "PUT" });
    expect(cancel.status).toBe(202);
    const onA = await stream.rest();
    const onB = await follower.rest();
    expect(onA.at(-1)?.type).toBe("turn_cancelled");
    expect(onB.filter((e) => TERMINAL.has(e.type)).map((e) => e.type)).toEqual(["turn_cancelled"]);
    expect(contract(onB)).toEqual(contract(onA));
    expect(await runStatus(a, runId)).toBe("cancelled");
  });

  test("B starting up leaves A's running turn alone", async () => {
    const url = await freshPostgresDatabase();
    const a = await instance(url);
    const { stream, runId } = await startLoop(a);
    const b = await instance(url, a.dataDir);
    expect(await runStatus(b, runId)).toBe("running");
    expect((await b.ctx.leases.get("turn", runId))?.holder).toBe(a.ctx.instanceId);
    // Past a lease time, A's heartbeat has kept it: B's sweeps leave it alone too.
    await Bun.sleep(LEASE_MS * 1.5);
    expect(await runStatus(b, runId)).toBe("running");
    expect((await a.request(`/api/runs/${runId}/cancellation`, { method: "PUT" })).status).toBe(202);
    const events = await stream.rest();
    expect(events.filter((e) => TERMINAL.has(e.type)).map((e) => e.type)).toEqual(["turn_cancelled"]);
    expect(await runStatus(b, runId)).toBe("cancelled");
  });

  test("A stops heartbeating: its run fails for B's follower once the lease lapses, never before", async () => {
    const [a, b] = await twoInstances();
    const { session, key, stream, runId } = await startLoop(a);
    const follower = follow(await b.request(`/api/sessions/${session}/turns`, turnRequest(LOOP, key)));
    await follower.until("code");
    // A "crashes": no more heartbeats, sweeps or signals (its turn goes on, as if cut off).
    a.ctx.leases.stop();
    await a.family("turns").runtime.instances.stop();
    await Bun.sleep(50); // a renewal already under way lands
    const lease = await b.ctx.leases.get("turn", runId);
    expect(lease?.holder).toBe(a.ctx.instanceId);
    const events = await follower.rest();
    const ended = Date.now();
    expect(ended).toBeGreaterThanOrEqual(lease?.expires_at as number);
    expect(events.filter((e) => TERMINAL.has(e.type))).toEqual([
      expect.objectContaining({ type: "turn_error", code: "interrupted" }),
    ]);
    expect(await runStatus(b, runId)).toBe("failed");
    // A's own run is stopped for the teardown (a real crash took it with the process).
    a.family("turns").runtime.live.get(runId)?.controller.abort("cancelled");
    // A's own readers end with the outcome B committed, not a second one of A's.
    const onA = await stream.rest();
    expect(onA.filter((e) => TERMINAL.has(e.type))).toEqual([
      expect.objectContaining({ type: "turn_error", code: "interrupted" }),
    ]);
    await waitFor(() => !a.family("turns").runtime.live.get(runId));
    expect(await runStatus(b, runId)).toBe("failed");
  });
});
