/**
 * A turn from its POST to its last event, told top-down (docs/turns.md "A turn's stream"):
 *
 *   1. the input is checked before anything streams (`turnInput`: a 422 otherwise);
 *   2. the stream opens with `turn_status` keep-alives while the turn is prepared (`keepAlive`), and
 *      preparation runs its steps (turn-preparation.ts: the session and the Idempotency-Key, the sandbox,
 *      skills, attachments and model, the claim, the interpreter, the run started in the background);
 *   3. a failed preparation ends the stream with `turn_error` then `turn_finish` (`failed`);
 *   4. a repeated key replays the committed run (`delivery: "replay"`), anything else follows the live
 *      run to its terminal event;
 *   5. the events become SSE frames in the form the request asked for (`turnFrames`).
 *
 * Cancelling a run (PUT /api/runs/{id}/cancellation) is here too: it is the other end of a live run.
 */
import type { PolicySettings } from "../../config/policy-schema.ts";
import { AppError } from "../../http/errors.ts";
import type { SseFrame } from "../../http/sse.ts";
import type { Logger } from "../../log.ts";
import type { TurnAnalytics } from "../runtime/analytics.ts";
import { CompatEncoder, type TurnEvent } from "../runtime/events.ts";
import type { RunRow, TurnRunStore } from "../stores/runs.ts";
import { SandboxLine, type TurnInput, TurnPreparationError, type TurnSubmission } from "./prepared-turn.ts";
import type { TurnInstances } from "./turn-instances.ts";
import { rootModelAllowed } from "./turn-model.ts";
import { prepareTurn, type TurnPreparationDeps } from "./turn-preparation.ts";

/** What a turn's stream uses: preparation's dependencies, analytics and the log; cancelling, runs. */
export type TurnServiceDeps = TurnPreparationDeps & {
  runs: Pick<TurnRunStore, "get" | "requestCancel" | "allByKey">;
  instances: Pick<TurnInstances, "cancel" | "elsewhere" | "remote" | "hold" | "release" | "logged">;
  /** Read per turn: the heartbeat and the preparation deadline, the policy's model. */
  settings: Pick<PolicySettings, "runtime" | "model">;
  analytics: Pick<TurnAnalytics, "capture">;
  log: Logger;
};

/** The request body as the route's schema (TurnRequest) admitted it. */
export interface TurnBody {
  text: string;
  attachment_ids?: string[];
  skill_selections?: { id: string; expected_version: string }[];
  model?: string;
}

/** Who asks, in which session, under which Idempotency-Key, with what body. */
export interface TurnPost {
  owner: string;
  sessionId: string;
  key: string;
  body: TurnBody;
}

export type TurnStreamForm = "events" | "ui-message-stream";

export type CancelOutcome =
  | { accepted: true; view: { runId: string; status: "cancelling" } }
  | { accepted: false; view: { runId: string; status: Exclude<RunRow["status"], "running"> } };

export class TurnService {
  constructor(private readonly deps: TurnServiceDeps) {}

  /**
   * Step 1, then the frames of steps 2 to 5. Throws (a 422 before streaming) when the input is bad.
   * `shutdown` is the server's: at shutdown the stream still ends with one terminal event (the live run
   * fails with `server_stopping`) before the server closes it.
   */
  async start(request: TurnPost, form: TurnStreamForm, shutdown: AbortSignal) {
    const input = turnInput(request.body);
    const { models, settings } = this.deps;
    if (
      input.model !== undefined &&
      !(await rootModelAllowed({ models, model: settings.model }, input.model))
    )
      throw new AppError("invalid", `The model '${input.model}' is not one this server offers for turns`, {
        status: 400,
        code: "model_not_allowed",
      });
    const submission: TurnSubmission = { ...request, input };
    // `signal` is the client's: gone, the stream stops and the turn goes on.
    return (signal: AbortSignal) => turnFrames(this.events(submission, signal, shutdown), form);
  }

  /** The caller's runs under an Idempotency-Key (any session), newest first: where a keyed turn ran. */
  async byKey(owner: string, key: string) {
    const runs = await this.deps.runs.allByKey(owner, key, 20);
    const items = runs.map((run) => ({
      runId: run.id,
      sessionId: run.session_id,
      status: run.status,
      createdAt: run.created_at,
      model: run.model,
    }));
    return { items };
  }

  /** Durable cancellation: recorded in the database, and the run is stopped at once wherever it executes. */
  async cancel(owner: string, runId: string): Promise<CancelOutcome> {
    const { runs, instances, analytics } = this.deps;
    const run = await runs.get(owner, runId);
    if (!run) throw AppError.notFound("Run not found");
    analytics.capture("run_cancellation_requested");
    if (run.status !== "running") return { accepted: false, view: { runId: run.id, status: run.status } };
    await runs.requestCancel(run.id);
    // Here, or over the bus on the instance executing it.
    await instances.cancel(run.id);
    return { accepted: true, view: { runId: run.id, status: "cancelling" } };
  }

  /** Steps 2 to 4: keep-alives while preparing, then the failure, the replay or the live run. */
  private async *events(
    submission: TurnSubmission,
    signal: AbortSignal,
    shutdown: AbortSignal,
  ): AsyncGenerator<TurnEvent> {
    const { runtime } = this.deps.settings;
    const started = Date.now();
    const line = new SandboxLine();
    const timeout = new AbortController();
    const outcome = yield* keepAlive(prepareTurn(this.deps, submission, timeout.signal, line), {
      started,
      heartbeatMs: runtime.heartbeat_seconds * 1000,
      timeoutMs: runtime.preparation_timeout_seconds * 1000,
      line,
      signal,
      timeout,
      shutdown,
    });
    if (!outcome) return;
    if ("error" in outcome) {
      yield* this.failed(outcome.error, Date.now() - started);
      return;
    }
    const prepared = outcome.value;
    if (prepared.kind === "replay") {
      for (const event of prepared.events)
        yield event.type === "turn_start" ? { ...event, delivery: "replay" } : event;
      return;
    }
    this.deps.analytics.capture("turn_created");
    yield* prepared.live.follow(signal);
  }

  /** Step 3: a preparation that failed ends with the closing pair; an unexpected error is logged, generic. */
  private *failed(error: unknown, durationMs: number): Generator<TurnEvent> {
    const failure =
      error instanceof TurnPreparationError
        ? error
        : new TurnPreparationError("Turn is unavailable", "turn_unavailable");
    if (!(error instanceof TurnPreparationError)) this.deps.log.error("turn preparation failed", { error });
    this.deps.analytics.capture("turn_failed", { phase: "open", code: failure.code });
    const detail = failure.detail === undefined ? {} : { detail: failure.detail };
    yield { type: "turn_error", message: failure.message, code: failure.code, durationMs, ...detail };
    yield {
      type: "turn_finish",
      finishReason: "error",
      status: "failed",
      checkpointVersion: 0,
      durationMs,
      traceId: null,
    };
  }
}

/**
 * Step 1: the input of a validated body, or a 422 before streaming: what the route's schemas leave to
 * check (a blank text: `invalid_request`; a skill selected twice: `invalid_skill_selection`, as the
 * schema's own failures of `skill_selections`).
 */
export function turnInput(body: TurnBody): TurnInput {
  if (body.text.trim() === "") throw new AppError("invalid", "text must not be empty");
  const selections = body.skill_selections ?? [];
  const seen = new Set<string>();
  for (const { id } of selections) {
    if (seen.has(id))
      throw new AppError("invalid", `skill_selections has '${id}' twice`, {
        code: "invalid_skill_selection",
      });
    seen.add(id);
  }
  return {
    text: body.text,
    attachment_ids: body.attachment_ids ?? [],
    skill_selections: selections.map(({ id, expected_version }) => ({ id, expected_version })),
    ...(body.model === undefined ? {} : { model: body.model }),
  };
}

type Outcome<T> = { value: T } | { error: unknown };

interface KeepAliveOptions {
  started: number;
  heartbeatMs: number;
  timeoutMs: number;
  line: SandboxLine;
  /** The client went away: stop sending (the work itself goes on). */
  signal: AbortSignal;
  /** Aborted when the deadline passes or the server stops, with that reason. */
  timeout: AbortController;
  shutdown: AbortSignal;
}

type StatusEvent = Extract<TurnEvent, { type: "turn_status" }>;

function status(line: SandboxLine): StatusEvent {
  if (line.ahead === undefined)
    return {
      type: "turn_status",
      phase: "preparation",
      status: "running",
      message: line.starting ? "starting a sandbox" : null,
    };
  return {
    type: "turn_status",
    phase: "preparation",
    status: "waiting",
    message: `waiting for a sandbox (place ${line.ahead + 1} in line)`,
  };
}

/**
 * Step 2: `turn_status` keep-alives every `runtime.heartbeat_seconds` until `work` settles; returns its
 * outcome, or undefined when the client left. A turn waiting in line for a sandbox (the pool is at its
 * ceiling) says so, with its place in line, each time the line moves; time in line does not count
 * against the preparation deadline (the pool's queue deadline bounds it instead). A turn whose
 * interpreter is still starting (a cold pyodide: seconds) says that too, instead of contentless
 * keep-alives. At the deadline (or shutdown) it aborts `timeout` and waits for `work` to give up.
 */
async function* keepAlive<T>(
  work: Promise<T>,
  o: KeepAliveOptions,
): AsyncGenerator<TurnEvent, Outcome<T> | undefined> {
  const settled = work.then(
    (value): Outcome<T> => ({ value }),
    (error: unknown): Outcome<T> => ({ error }),
  );
  const stopping = new Promise<"shutdown">((resolve) => {
    if (o.shutdown.aborted) resolve("shutdown");
    else o.shutdown.addEventListener("abort", () => resolve("shutdown"), { once: true });
  });
  // The opening status first (running, no message); what the sandbox is doing follows.
  let shown: StatusEvent = { type: "turn_status", phase: "preparation", status: "running", message: null };
  yield shown;
  for (;;) {
    // A change (a place in line, a starting sandbox) is told at once; heartbeats repeat the last status.
    const current = status(o.line);
    if (current.message !== shown.message) {
      shown = current;
      yield shown;
    }
    const now = Date.now();
    const deadline = o.started + o.timeoutMs + o.line.waitedMs(now);
    const inLine = o.line.ahead !== undefined;
    const wait = inLine ? o.heartbeatMs : Math.max(0, Math.min(o.heartbeatMs, deadline - now));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = new Promise<"tick">((resolve) => {
      timer = setTimeout(() => resolve("tick"), wait);
    });
    const next = await Promise.race([settled, tick, o.line.changed().then(() => "moved" as const), stopping]);
    clearTimeout(timer);
    if (typeof next === "object") return next;
    if (o.signal.aborted) return undefined;
    if (next === "shutdown" || (o.line.ahead === undefined && Date.now() >= deadline)) {
      o.timeout.abort(next === "shutdown" ? "shutdown" : "timeout");
      return await settled;
    }
    if (next === "tick") yield shown;
  }
}

/**
 * Step 5: a turn's events as SSE frames (docs/design.md §10): by default each turn event (`event:
 * <type>`) followed by its UIMessageChunk compatibility frames; the `ui-message-stream` form carries the
 * chunks only, every event without a UI chunk travelling as a `data-<type>` part.
 */
async function* turnFrames(events: AsyncIterable<TurnEvent>, form: TurnStreamForm): AsyncIterable<SseFrame> {
  const compatOnly = form === "ui-message-stream";
  const encoder = new CompatEncoder();
  for await (const event of events) {
    if (!compatOnly) yield { event: event.type, data: event };
    for (const chunk of encoder.chunks(event)) yield { data: chunk };
  }
}
