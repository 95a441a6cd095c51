/**
 * The families' hot paths on PostgreSQL ÷ SQLite, measured in the same run (issue 27, item 7; sign-in and
 * the auth checks are bench/auth-db.ts's). Two apps, one on app.db and one on a fresh PostgreSQL database
 * (the throwaway cluster of tests/helpers/postgres.ts), interleaved per round:
 *
 *   lookup by key     `GET /v1/agents/:id` through the app in process
 *   turn event log    a turn's database work: the claim, 40 events through the recorder (batched), the
 *                     commit of the outcome with the rest of the log (server/turns/services/turn-recorder.ts)
 *   chat run          `POST /api/chat` with a scripted model answering at once: the run's mirror writes
 *                     (session, run, its end) and the pi runtime around them, read to the end
 *   local search      `POST /search/local` on an index of the fixture books (offline: the context tables)
 *   memory search     `GET /v1/memory/search` over 300 memories of one agent (BM25 on both engines)
 *
 * Statements per call are counted on the port (bench/lib/count-statements.ts).
 *
 *   bun bench/families-db.ts [--n 50] [--rounds 3]
 */
import { parseArgs } from "node:util";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { LiveRun } from "../server/turns/runtime/live-run.ts";
import { turnRecorder } from "../server/turns/services/turn-recorder.ts";
import { TurnRunStore } from "../server/turns/stores/runs.ts";
import { TurnSessionStore } from "../server/turns/stores/sessions.ts";
import { createTestApp, postJson, type TestApp } from "../tests/helpers/app.ts";
import { scriptedModel } from "../tests/helpers/faux.ts";
import { freshPostgresDatabase, stopPostgres } from "../tests/helpers/postgres.ts";
import { fixtureDocuments } from "../tests/search/fixtures.ts";
import { countStatements } from "./lib/count-statements.ts";
import { printEngineRatios } from "./lib/engine-ratios.ts";

const { values } = parseArgs({
  options: { n: { type: "string", default: "50" }, rounds: { type: "string", default: "3" } },
});
const N = Number(values.n);
const ROUNDS = Number(values.rounds);
const TURN_EVENTS = 40;

interface Engine {
  name: string;
  t: TestApp;
  counter: { count: number; sql?: string[] };
  agentId: string;
  model: string;
  sessionId: string;
}

async function engine(name: string, url: string): Promise<Engine> {
  const t = await createTestApp({ env: { APP_DATABASE_URL: url } });
  const agent = await t.json<{ id: string }>("/v1/agents", postJson({ name: "Bench", role: "bench" }));
  for (let i = 0; i < 300; i++) {
    const content = `note ${i}: the user prefers ${i % 7 === 0 ? "tabs" : "spaces"} and ${i % 5 === 0 ? "dark" : "light"} themes, project ${i % 13}`;
    await t.request(
      "/v1/memory",
      postJson({
        owner_id: agent.body.id,
        owner_type: "agent",
        type: "PREFERENCES",
        content,
        tags: [`p${i % 4}`],
      }),
    );
  }
  const documents = fixtureDocuments().map((d) => ({ name: d.title, text: d.text }));
  const built = await t.request("/search/index", postJson({ documents }));
  if (built.status !== 200) throw new Error(`index build answered ${built.status}`);
  // Enough scripted answers for every chat call of the run.
  const answers = Array.from({ length: (N + 10) * ROUNDS + 20 }, () => fauxAssistantMessage("Done."));
  const model = scriptedModel(t.ctx.models, answers).id;
  const sessionId = `ses_${crypto.randomUUID().replaceAll("-", "")}`;
  await new TurnSessionStore(t.ctx.database).create("local", sessionId, "bench");
  return { name, t, counter: countStatements(t.ctx.database), agentId: agent.body.id, model, sessionId };
}

const warning = (i: number) => ({ type: "warning" as const, message: `event ${i}`, code: "bench" });
const finish = {
  type: "turn_finish" as const,
  finishReason: "stop" as const,
  status: "completed" as const,
  checkpointVersion: 1,
  durationMs: 1,
  traceId: null,
};

async function turn(e: Engine): Promise<void> {
  const runs = new TurnRunStore(e.t.ctx.database);
  const id = `run_${crypto.randomUUID().replaceAll("-", "")}`;
  const claimed = await runs.claim({
    id,
    owner_id: "local",
    session_id: e.sessionId,
    idempotency_key: crypto.randomUUID(),
    fingerprint: "f",
    input_json: "{}",
  });
  if (!claimed) throw new Error("the claim failed");
  const recorder = turnRecorder(
    { runs, tracer: e.t.family("turns").runtime.tracer, rlm: e.t.ctx.config.policy.settings.rlm },
    {
      run: { id, owner_id: "local", session_id: e.sessionId },
      live: new LiveRun(id, "local", e.sessionId),
      traceId: null,
    },
  );
  for (let i = 0; i < TURN_EVENTS; i++) {
    recorder.emit(warning(i));
    await Bun.sleep(0); // as a turn emits: the event loop turns between events
  }
  await recorder.commit(async (tx) => {
    await runs.commit(id, { status: "completed", parts: [], usage: null, durationMs: 1 }, tx);
    recorder.emit(finish);
  });
}

async function ok(response: Response, what: string): Promise<void> {
  if (response.status !== 200) throw new Error(`${what} answered ${response.status}`);
  await response.arrayBuffer();
}

type Subject = (e: Engine) => Promise<unknown>;
const subjects: Record<string, Subject> = {
  "lookup by key": async (e) => ok(await e.t.request(`/v1/agents/${e.agentId}`), "the agent"),
  "turn event log": turn,
  "chat run": async (e) =>
    ok(await e.t.request("/api/chat", postJson({ message: "Go", model: e.model })), "chat"),
  "local search": async (e) =>
    ok(
      await e.t.request("/search/local", postJson({ query: "Who is Scrooge and what does he fear?" })),
      "search",
    ),
  "memory search": async (e) =>
    ok(
      await e.t.request(
        `/v1/memory/search?content_query=${encodeURIComponent("tabs dark")}&owner_id=${e.agentId}`,
      ),
      "memory search",
    ),
};
/** The chat run is the slowest: fewer calls. */
const callsOf = (name: string) => (name === "chat run" ? Math.max(5, Math.floor(N / 5)) : N);

const engines = [await engine("sqlite", ""), await engine("postgres", await freshPostgresDatabase())];
try {
  if (process.env.BENCH_SHOW_SQL) {
    const e = engines[1] as Engine;
    for (const [name, run] of Object.entries(subjects)) {
      e.counter.sql = [];
      await run(e);
      console.log(`${name}:\n  ${e.counter.sql.join("\n  ")}`);
    }
    e.counter.sql = undefined;
  }
  await printEngineRatios("families' hot paths", engines, subjects, { rounds: ROUNDS, callsOf });
} finally {
  for (const e of engines) await e.t.close();
  await stopPostgres();
}
