/**
 * How a turn's events are recorded: each passes the turn's event budget, is handed to the live readers
 * and queued for the durable log; nothing is accepted after the terminal event, nor (but the terminal
 * event) once the turn is aborted. Steps and tool calls also become tracing spans when the turn is traced.
 *
 * The log is written in batches, one multi-row INSERT each (on PostgreSQL one INSERT per event cost 32×
 * SQLite's time; batches of 20, 2×): when 20 events are queued, or 100 ms after the first one waiting,
 * and at the end of the turn inside the transaction that commits its outcome (`commit`), so a committed
 * turn's log is whole. A crash can lose the last few events of a turn that never committed (it is
 * failed at restart, and a replay closes what was logged with a turn_error). Writes go one after another.
 *
 * Events recorded inside `commit` (the terminal event) reach the readers only after the transaction
 * commits, and never when it fails: no reader sees an outcome that was rolled back.
 */
import type { PolicySettings } from "../../config/policy-schema.ts";
import type { Tx } from "../../storage/db/port.ts";
import { compactForStorage, EventBudget } from "../runtime/event-budget.ts";
import { TERMINAL_TYPES, type TurnEvent } from "../runtime/events.ts";
import type { LiveRun } from "../runtime/live-run.ts";
import type { Span, TurnTracer } from "../runtime/tracing.ts";
import type { EventRow, RunRow, TurnRunStore } from "../stores/runs.ts";
import type { TurnInstances } from "./turn-instances.ts";

/** Events per batch of the log, and the longest an event waits for its batch. */
export const EVENT_BATCH = 20;
export const EVENT_BATCH_DELAY_MS = 100;

export interface TurnRecorderDeps {
  runs: Pick<TurnRunStore, "appendEvents" | "tx">;
  tracer: Pick<TurnTracer, "start">;
  /** The event caps (read when the turn starts). */
  rlm: PolicySettings["rlm"];
  /** Tells followers on any instance that the log grew (turn-instances.ts). */
  instances?: Pick<TurnInstances, "logged">;
  /** Where a failed batch write is told (the turn goes on; its commit writes what is still queued). */
  log?: { warn(message: string, fields?: Record<string, unknown>): void };
}

/** The run an event belongs to: its row, its live readers, its trace. */
export interface RecordedRun {
  run: Pick<RunRow, "id" | "owner_id" | "session_id">;
  live: LiveRun;
  traceId: string | null;
}

export type Emit = (event: TurnEvent) => void;

export interface TurnRecorder {
  emit: Emit;
  /**
   * Runs `fn` in a transaction that also writes every queued event (those `fn` emits included); the
   * events `fn` emits reach the readers once it commits, after `settled(value)` (work a reader of the
   * terminal event may rely on, e.g. promoted memories). When it fails, they are dropped (and may be
   * emitted again by the next commit), and the error is rethrown.
   */
  commit<T>(fn: (tx: Tx) => Promise<T>, settled?: (value: T) => Promise<void>): Promise<T>;
  /** Writes the queued events now; resolves once they (and every earlier write) are stored. */
  flush(): Promise<void>;
}

export function turnRecorder(deps: TurnRecorderDeps, turn: RecordedRun): TurnRecorder {
  const { runs, tracer, rlm } = deps;
  let seq = 0;
  const budget = new EventBudget({
    perStep: rlm.max_events_per_step,
    perTurn: rlm.max_events_per_turn,
    maxChars: rlm.max_event_chars,
    maxBytes: rlm.max_stored_bytes_per_turn,
  });
  const { run } = turn;
  let stepSpan: Span | undefined;
  const toolSpans = new Map<string, Span>();
  const trace = (event: TurnEvent): void => {
    if (event.type === "step_start")
      stepSpan = tracer.start(turn.traceId, run.owner_id, `step ${event.step}`, run.id);
    else if (event.type === "step_finish") stepSpan?.end("ok", { durationMs: event.durationMs });
    else if (event.type === "tool_call")
      toolSpans.set(
        event.toolCallId,
        tracer.start(turn.traceId, run.owner_id, `tool ${event.toolName}`, run.id, { input: event.input }),
      );
    else if (event.type === "tool_result") {
      toolSpans
        .get(event.toolCallId)
        ?.end(event.error ? "error" : "ok", { output: event.output, error: event.error });
      toolSpans.delete(event.toolCallId);
    }
  };

  let queued: EventRow[] = [];
  /** Set while a commit's function runs: what it emits is held until the transaction commits. */
  let held: EventRow[] | undefined;
  /** A terminal event was recorded (and not dropped by a failed commit): nothing more is accepted. */
  let closed = false;
  let writes: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;

  const deliver = (event: TurnEvent): void => {
    turn.live.push(event);
    trace(event);
  };
  /** Queues `fn` after every earlier write; the chain itself never rejects. */
  const enqueue = <T>(fn: () => Promise<T>): Promise<T> => {
    const result = writes.then(fn);
    writes = result.then(
      () => {},
      () => {},
    );
    return result;
  };
  const flush = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    return enqueue(async () => {
      const rows = queued;
      queued = [];
      if (rows.length === 0) return;
      try {
        await runs.appendEvents(run, rows);
        deps.instances?.logged(run.id);
      } catch (error) {
        // Kept for the next write (the commit's at the latest), ahead of what came since.
        queued = [...rows, ...queued];
        deps.log?.warn("turn events not written yet", { runId: run.id, error: (error as Error).message });
      }
    });
  };
  const record = (event: TurnEvent): void => {
    const at = seq++;
    queued.push({ seq: at, event: compactForStorage(event) });
    if (TERMINAL_TYPES.has(event.type)) closed = true;
    if (held) held.push({ seq: at, event });
    else deliver(event);
    if (queued.length >= EVENT_BATCH) void flush();
    else timer ??= setTimeout(() => void flush(), EVENT_BATCH_DELAY_MS);
  };
  const emit: Emit = (event) => {
    if (closed || turn.live.finished) return;
    if (turn.live.controller.signal.aborted && !TERMINAL_TYPES.has(event.type)) return;
    for (const admitted of budget.admit(event)) record(admitted);
    if (budget.exhausted && !turn.live.controller.signal.aborted) turn.live.controller.abort("event_limit");
  };
  const commit = <T>(fn: (tx: Tx) => Promise<T>, settled?: (value: T) => Promise<void>): Promise<T> => {
    clearTimeout(timer);
    timer = undefined;
    return enqueue(async () => {
      const mine: EventRow[] = [];
      let taken: EventRow[] = [];
      held = mine;
      let value: T;
      try {
        value = await runs.tx(async (tx) => {
          let value: T;
          try {
            value = await fn(tx);
          } finally {
            held = undefined;
          }
          taken = queued;
          queued = [];
          await runs.appendEvents(run, taken, tx);
          return value;
        });
      } catch (error) {
        held = undefined;
        // What `fn` emitted belongs to the outcome that was rolled back: forget it, keep the rest queued.
        const dropped = new Set(mine.map((row) => row.seq));
        queued = [...taken, ...queued].filter((row) => !dropped.has(row.seq));
        if (mine.some(({ event }) => TERMINAL_TYPES.has(event.type))) closed = false;
        throw error;
      }
      deps.instances?.logged(run.id);
      // Committed: what `fn` emitted now reaches the readers, once the settling work is done.
      try {
        await settled?.(value);
      } finally {
        for (const { event } of mine) deliver(event);
      }
      return value;
    });
  };
  return { emit, commit, flush };
}
