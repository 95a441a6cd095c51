/**
 * How a turn's events are recorded: each passes the turn's event budget, is appended to the durable log
 * first and then handed to the live readers; nothing is accepted after the terminal event, nor (but the
 * terminal event) once the turn is aborted. Steps and tool calls also become tracing spans when the turn
 * is traced.
 */
import type { PolicySettings } from "../../config/policy-schema.ts";
import { compactForStorage, EventBudget } from "../runtime/event-budget.ts";
import { TERMINAL_TYPES, type TurnEvent } from "../runtime/events.ts";
import type { LiveRun } from "../runtime/live-run.ts";
import type { Span, TurnTracer } from "../runtime/tracing.ts";
import type { RunRow, TurnRunStore } from "../stores/runs.ts";

export interface TurnRecorderDeps {
  runs: Pick<TurnRunStore, "appendEvent">;
  tracer: Pick<TurnTracer, "start">;
  /** The event caps (read when the turn starts). */
  rlm: PolicySettings["rlm"];
}

/** The run an event belongs to: its row, its live readers, its trace. */
export interface RecordedRun {
  run: Pick<RunRow, "id" | "owner_id" | "session_id">;
  live: LiveRun;
  traceId: string | null;
}

export type Emit = (event: TurnEvent) => void;

export function turnRecorder({ runs, tracer, rlm }: TurnRecorderDeps, turn: RecordedRun): Emit {
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
  const record = (event: TurnEvent): void => {
    runs.appendEvent(run, seq++, compactForStorage(event));
    turn.live.push(event);
    trace(event);
  };
  return (event) => {
    if (turn.live.finished) return;
    if (turn.live.controller.signal.aborted && !TERMINAL_TYPES.has(event.type)) return;
    for (const admitted of budget.admit(event)) record(admitted);
    if (budget.exhausted && !turn.live.controller.signal.aborted) turn.live.controller.abort("event_limit");
  };
}
