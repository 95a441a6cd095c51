/**
 * A turn's event delay to a follower on another instance (issue 28, item 6): two apps on one PostgreSQL
 * database (the run's own cluster), a running run held by A, and its event log growing one committed
 * batch at a time on A, each signalled on the bus as the turn recorder does. The delay is from the
 * batch's commit on A to its arrival at a follower reading the log on B (LISTEN/NOTIFY, then a read),
 * printed against a follower of the same log on A in the same run (the same path, without the hop
 * between instances). One process, so both are timed on one clock.
 *
 *   bun bench/instances.ts [--events 300] [--gap 20]
 */
import { parseArgs } from "node:util";
import type { TurnEvent } from "../server/turns/runtime/events.ts";
import { TurnRunStore } from "../server/turns/stores/runs.ts";
import { createTestApp } from "../tests/helpers/app.ts";
import { freshPostgresDatabase, stopPostgres } from "../tests/helpers/postgres.ts";
import { fmt, percentile } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { events: { type: "string", default: "300" }, gap: { type: "string", default: "20" } },
});
const events = Number(values.events);
const gapMs = Number(values.gap);

const url = await freshPostgresDatabase();
const a = await createTestApp({ env: { APP_DATABASE_URL: url } });
const b = await createTestApp({ dataDir: a.dataDir, env: { APP_DATABASE_URL: url } });
try {
  const session = (
    await a.json<{ id: string }>("/api/sessions", {
      method: "POST",
      body: JSON.stringify({ title: "bench" }),
      headers: { "content-type": "application/json" },
    })
  ).body.id;
  const runs = new TurnRunStore(a.ctx.database);
  const onA = a.family("turns").runtime.instances;
  const onB = b.family("turns").runtime.instances;
  const runId = `run_bench${Date.now().toString(16)}`;
  await onA.hold(runId);
  const run = { id: runId, owner_id: "local", session_id: session };
  await runs.claim({ ...run, idempotency_key: "bench", fingerprint: "bench", input_json: "{}" });

  const committed = new Map<number, number>();
  const follow = async (instances: typeof onA) => {
    const delays: number[] = [];
    for await (const event of instances.remote(runId).follow(new AbortController().signal)) {
      const at = performance.now();
      if (event.type !== "warning") continue;
      const seq = Number(event.message);
      delays.push(at - (committed.get(seq) ?? at));
    }
    return delays;
  };
  const followers = [follow(onB), follow(onA)];
  await Bun.sleep(200);
  for (let seq = 0; seq < events; seq++) {
    const event: TurnEvent = { type: "warning", message: String(seq), code: "bench" };
    await runs.appendEvents(run, [{ seq, event }]);
    committed.set(seq, performance.now());
    onA.logged(runId);
    await Bun.sleep(gapMs);
  }
  const finish: TurnEvent = { type: "turn_error", message: "bench over", code: "bench", durationMs: 0 };
  await runs.appendEvents(run, [{ seq: events, event: finish }]);
  onA.logged(runId);
  const [other, same] = await Promise.all(followers);
  const line = (name: string, d: number[]) =>
    `${name.padEnd(34)} p50 ${fmt(percentile(d, 50), 1)} ms   p99 ${fmt(percentile(d, 99), 1)} ms   (${d.length} events)`;
  console.log(
    `a turn's event delay from its commit on A to a follower (${events} batches, ${gapMs} ms apart)`,
  );
  console.log(line("follower on B (another instance)", other));
  console.log(line("follower on A (same instance)", same));
  console.log(
    `ratio B/A: p50 ${fmt(percentile(other, 50) / percentile(same, 50), 2)}×   p99 ${fmt(percentile(other, 99) / percentile(same, 99), 2)}×`,
  );
  await onA.release(runId);
} finally {
  await b.close();
  await a.close();
  await stopPostgres();
}
