/**
 * Executes one claimed turn in the background: runs the RLM loop (or offline mode), appends every event
 * to SQLite as it happens (within the turn's event budget) and hands it to the readers, then commits the
 * outcome exactly once: completed (artifacts published, memories promoted), failed, or cancelled (a
 * tombstone). The turn has a wall-clock deadline; it, the event budget and server shutdown end it as
 * failed with their own codes, a cancellation request as cancelled.
 */

import type { Api, Model } from "@mariozechner/pi-ai";
import { SandboxKilled } from "../sandbox/interpreter.ts";
import { compactForStorage, EventBudget } from "./event-budget.ts";
import { TERMINAL_TYPES, type TurnEvent } from "./events.ts";
import { assistantParts, tombstoneParts } from "./history.ts";
import type { LiveRun } from "./live-run.ts";
import type { Repl } from "./runtime/repl.ts";
import { AbortedError, type RlmResult, runOffline, runRlm } from "./runtime/rlm.ts";
import type { UsageMeter } from "./runtime/usage.ts";
import type { TurnServices } from "./services.ts";
import type { RunRow } from "./store.ts";
import type { Span } from "./tracing.ts";

export interface ClaimedTurn {
  run: Pick<RunRow, "id" | "owner_id" | "session_id">;
  live: LiveRun;
  model: Model<Api>;
  offline: boolean;
  text: string;
  system: string;
  prompt: string;
  repl: Repl;
  usage: UsageMeter;
  traceId: string | null;
  /** Events emitted right after turn_start (attachments bound, skills preloaded). */
  opening: TurnEvent[];
  memories: { category: string; text: string }[];
  startedAt: number;
}

/** Why a turn's controller was aborted, other than a cancellation request: each fails the turn. */
const STOP_REASONS: Record<string, { code: string; message: (p: TurnServices["settings"]) => string }> = {
  shutdown: { code: "server_stopping", message: () => "The server is stopping; this turn was stopped" },
  turn_timeout: {
    code: "turn_timeout",
    message: (p) => `The turn ran past its time limit of ${p.rlm.turn_timeout_seconds} s`,
  },
  event_limit: { code: "event_limit", message: () => "The turn produced more events than it may store" },
};

/**
 * Appends to the durable log first, then to the live readers; nothing is accepted after the terminal
 * event. Every event passes the turn's event budget first. Steps and tool calls also become tracing
 * spans (when the turn is traced).
 */
export function emitterFor(services: TurnServices, turn: Pick<ClaimedTurn, "run" | "live" | "traceId">) {
  let seq = 0;
  const { rlm } = services.settings;
  const budget = new EventBudget({
    perStep: rlm.max_events_per_step,
    perTurn: rlm.max_events_per_turn,
    maxChars: rlm.max_event_chars,
    maxBytes: rlm.max_stored_bytes_per_turn,
  });
  const { run } = turn;
  const record = (event: TurnEvent): void => {
    services.store.appendEvent(run, seq++, compactForStorage(event));
    turn.live.push(event);
    trace(event);
  };
  let stepSpan: Span | undefined;
  const toolSpans = new Map<string, Span>();
  const trace = (event: TurnEvent): void => {
    const tracer = services.tracer;
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
  return (event: TurnEvent): void => {
    if (turn.live.finished) return;
    if (turn.live.controller.signal.aborted && !TERMINAL_TYPES.has(event.type)) return;
    for (const admitted of budget.admit(event)) record(admitted);
    if (budget.exhausted && !turn.live.controller.signal.aborted) turn.live.controller.abort("event_limit");
  };
}

export async function executeTurn(
  services: TurnServices,
  turn: ClaimedTurn,
  emitEvent: (e: TurnEvent) => void,
): Promise<void> {
  const { live, run } = turn;
  const signal = live.controller.signal;
  const policy = services.settings;
  const span = services.tracer.start(turn.traceId, run.owner_id, "turn", run.id, {
    model: `${turn.model.provider}/${turn.model.id}`,
  });
  const elapsed = () => Date.now() - turn.startedAt;
  const emit = emitEvent;
  const traceField = policy.tracing.expose_trace_id && turn.traceId ? { traceId: turn.traceId } : {};
  emit({ type: "turn_start", runId: run.id, sessionId: run.session_id, delivery: "live", ...traceField });
  for (const event of turn.opening) emit(event);
  const deadline = setTimeout(
    () => live.controller.abort("turn_timeout"),
    policy.rlm.turn_timeout_seconds * 1000 - elapsed(),
  );
  let result: RlmResult | undefined;
  try {
    const limits = {
      maxIters: policy.rlm.max_iters,
      maxCodeChars: policy.rlm.max_code_chars,
      maxOutputChars: policy.rlm.max_output_chars,
    };
    result = turn.offline
      ? await runOffline(turn.text, turn.repl, limits, signal, emit, services.offlineReply(turn.text))
      : await runRlm({
          models: services.models,
          model: turn.model,
          system: turn.system,
          prompt: turn.prompt,
          repl: turn.repl,
          limits,
          usage: turn.usage,
          signal,
          emit,
          modelCallTimeoutMs: policy.rlm.model_call_timeout_seconds * 1000,
        });
    if (signal.aborted) throw new AbortedError();
    if (result.finishReason === "length") {
      emit({
        type: "warning",
        message: "The turn reached its step or model-call limit before SUBMIT",
        code: "limit_reached",
      });
    }
    if (result.fields)
      emit({ type: "structured_result", schemaId: "submit", schemaVersion: "1", value: result.fields });
    let answer = result.answer;
    const maxAnswer = policy.rlm.max_answer_chars;
    if (answer.length > maxAnswer) {
      emit({
        type: "warning",
        message: `The answer was ${answer.length} characters; only the first ${maxAnswer} are kept`,
        code: "answer_truncated",
      });
      answer = answer.slice(0, maxAnswer);
    }
    emit({ type: "text", streamId: "answer", delta: answer, text: answer, final: true, role: "assistant" });
    emit({
      type: "usage",
      iterations: result.iterations,
      durationMs: elapsed(),
      usage: turn.usage.snapshot(),
    });
    // The final events may have passed the event budget (a huge structured result): that ends the turn.
    if (signal.aborted) throw new AbortedError();
    const finishReason = result.finishReason;
    // The outcome and the terminal event are one transaction: a crash leaves neither or both.
    const committed = services.store.tx(() => {
      const done = services.store.commit(run.id, {
        status: "completed",
        parts: assistantParts(live.events, "completed"),
        usage: turn.usage.snapshot(),
        durationMs: elapsed(),
      });
      if (done) {
        services.assets.settleCandidates(run.id, true);
        emit({
          type: "turn_finish",
          finishReason,
          status: "completed",
          checkpointVersion: 1,
          durationMs: elapsed(),
          traceId: policy.tracing.expose_trace_id ? turn.traceId : null,
        });
      }
      return done;
    });
    if (committed) services.promoteMemories(run.owner_id, turn.memories);
    span.end("ok", { iterations: result.iterations, usage: turn.usage.snapshot() });
  } catch (error) {
    // Whatever was interrupted (a model call, a step, a child), an aborted signal means cancellation,
    // unless the server is stopping or a budget (deadline, events) ended the turn: those fail it.
    const reason = typeof signal.reason === "string" ? signal.reason : "";
    const stopped = signal.aborted && Object.hasOwn(STOP_REASONS, reason) ? STOP_REASONS[reason] : undefined;
    const cancelled = signal.aborted && !stopped;
    if (cancelled) {
      services.store.tx(() => {
        services.store.commit(run.id, {
          status: "cancelled",
          parts: tombstoneParts(),
          usage: turn.usage.snapshot(),
          durationMs: elapsed(),
        });
        emit({ type: "turn_cancelled", reason: "Cancelled by request", durationMs: elapsed() });
      });
      services.assets.settleCandidates(run.id, false);
      span.end("error", { cancelled: true });
    } else {
      const memory = error instanceof SandboxKilled && error.reason === "memory";
      const message = stopped?.message(policy) ?? ((error as Error).message || "The turn failed");
      const code = stopped?.code ?? (memory ? "sandbox_memory_limit" : "execution_failed");
      const failure: TurnEvent = { type: "turn_error", message, code, durationMs: elapsed() };
      services.store.tx(() => {
        services.store.commit(run.id, {
          status: "failed",
          parts: assistantParts([...live.events, failure], "failed"),
          usage: turn.usage.snapshot(),
          errorCode: code,
          errorMessage: message,
          durationMs: elapsed(),
        });
        emit(failure);
      });
      services.assets.settleCandidates(run.id, false);
      services.analytics.capture("turn_failed", { phase: "stream", code });
      services.log.warn("turn failed", { runId: run.id, error: message });
      span.end("error", { error: message });
    }
  } finally {
    clearTimeout(deadline);
    turn.repl.close();
    services.live.remove(run.id);
  }
}
