/**
 * Executes one claimed turn in the background: runs the RLM loop (or offline mode), each event recorded
 * as it happens (turn-recorder.ts: the readers, and the durable log in batches), then commits the outcome
 * exactly once, with the rest of the log and the terminal event in one transaction (readers get the
 * terminal event after it commits): completed (artifacts published, memories promoted), failed, or cancelled (a
 * tombstone). The turn has a wall-clock deadline; it, the event budget and server shutdown end it as
 * failed with their own codes, a cancellation request as cancelled.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import type { PolicySettings } from "../../config/policy-schema.ts";
import type { Logger } from "../../log.ts";
import type { ModelService } from "../../models/service.ts";
import { SandboxKilled } from "../../sandbox/interpreter.ts";
import type { TurnAnalytics } from "../runtime/analytics.ts";
import type { TurnEvent } from "../runtime/events.ts";
import type { LiveRun, LiveRuns } from "../runtime/live-run.ts";
import { assistantParts, tombstoneParts } from "../runtime/parts.ts";
import type { Repl } from "../runtime/repl.ts";
import { AbortedError, type RlmResult, runOffline, runRlm } from "../runtime/rlm.ts";
import type { TurnTracer } from "../runtime/tracing.ts";
import type { UsageMeter } from "../runtime/usage.ts";
import type { TurnAssetStore } from "../stores/assets.ts";
import type { TurnRunStore } from "../stores/runs.ts";
import type { TurnFileService } from "./files.ts";
import { type Memory, promoteMemories } from "./memories.ts";
import type { TurnInstances } from "./turn-instances.ts";
import type { RecordedRun, TurnRecorder } from "./turn-recorder.ts";

export interface TurnExecutionDeps {
  runs: Pick<TurnRunStore, "commit" | "byId">;
  assets: Pick<TurnAssetStore, "settleCandidates">;
  live: Pick<LiveRuns, "remove">;
  instances: Pick<TurnInstances, "release">;
  /** Read per turn: the loop's caps and whether trace ids are exposed. */
  settings: Pick<PolicySettings, "rlm" | "tracing">;
  models: ModelService;
  tracer: Pick<TurnTracer, "start">;
  analytics: Pick<TurnAnalytics, "capture">;
  log: Logger;
  /** Where a completed turn's memory proposals are promoted (best effort: memories.ts). */
  files: Pick<TurnFileService, "forOwner">;
}

/** A turn claimed, its interpreter open: what executing it needs. */
export interface ClaimedTurn extends RecordedRun {
  model: Model<Api>;
  offline: boolean;
  /** The user's message: the prompt of the RLM loop, or the Python blocks run offline. */
  text: string;
  system: string;
  repl: Repl;
  usage: UsageMeter;
  /** Events emitted right after turn_start (attachments bound, skills preloaded). */
  opening: TurnEvent[];
  memories: Memory[];
  startedAt: number;
}

/** Why a turn's controller was aborted, other than a cancellation request: each fails the turn. */
const STOP_REASONS: Record<string, { code: string; message: (p: Pick<PolicySettings, "rlm">) => string }> = {
  shutdown: { code: "server_stopping", message: () => "The server is stopping; this turn was stopped" },
  turn_timeout: {
    code: "turn_timeout",
    message: (p) => `The turn ran past its time limit of ${p.rlm.turn_timeout_seconds} s`,
  },
  event_limit: { code: "event_limit", message: () => "The turn produced more events than it may store" },
  // Our lease lapsed and another instance failed the run (turn-instances.ts): its outcome stands.
  lease_lost: { code: "interrupted", message: () => "The server stopped during this turn" },
};

export async function executeTurn(
  deps: TurnExecutionDeps,
  turn: ClaimedTurn,
  recorder: TurnRecorder,
): Promise<void> {
  const { emit } = recorder;
  const { live, run } = turn;
  const signal = live.controller.signal;
  const policy = deps.settings;
  const span = deps.tracer.start(turn.traceId, run.owner_id, "turn", run.id, {
    model: `${turn.model.provider}/${turn.model.id}`,
  });
  const elapsed = () => Date.now() - turn.startedAt;
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
      ? await runOffline(turn.text, turn.repl, limits, signal, emit)
      : await runRlm({
          models: deps.models,
          model: turn.model,
          system: turn.system,
          prompt: turn.text,
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
    await recorder.commit(
      async (tx) => {
        const done = await deps.runs.commit(
          run.id,
          {
            status: "completed",
            parts: assistantParts(live.events, "completed"),
            usage: turn.usage.snapshot(),
            durationMs: elapsed(),
          },
          tx,
        );
        if (!done) throw new CommittedElsewhere();
        await deps.assets.settleCandidates(run.id, true, tx);
        emit({
          type: "turn_finish",
          finishReason,
          status: "completed",
          checkpointVersion: 1,
          durationMs: elapsed(),
          traceId: policy.tracing.expose_trace_id ? turn.traceId : null,
        });
        return done;
        // Memories are promoted before readers get turn_finish, so what they read next already has them.
      },
      (committed) => (committed ? promoteMemories(deps, run.owner_id, turn.memories) : Promise.resolve()),
    );
    span.end("ok", { iterations: result.iterations, usage: turn.usage.snapshot() });
  } catch (error) {
    try {
      if (error instanceof CommittedElsewhere) throw error;
      await commitFailure(error);
    } catch (again) {
      if (!(again instanceof CommittedElsewhere)) throw again;
      // Another instance failed the run (our lease lapsed): what it logged stands; readers here end too.
      await endedElsewhere(deps, live, elapsed());
      span.end("error", { error: "committed by another instance" });
    }
  } finally {
    clearTimeout(deadline);
    turn.repl.close();
    deps.live.remove(run.id);
    await deps.instances.release(run.id);
  }

  async function commitFailure(error: unknown): Promise<void> {
    // Whatever was interrupted (a model call, a step, a child), an aborted signal means cancellation,
    // unless the server is stopping or a budget (deadline, events) ended the turn: those fail it.
    const reason = typeof signal.reason === "string" ? signal.reason : "";
    const stopped = signal.aborted && Object.hasOwn(STOP_REASONS, reason) ? STOP_REASONS[reason] : undefined;
    const cancelled = signal.aborted && !stopped;
    if (cancelled) {
      await recorder.commit(async (tx) => {
        const outcome = {
          status: "cancelled",
          parts: tombstoneParts(),
          usage: turn.usage.snapshot(),
        } as const;
        if (!(await deps.runs.commit(run.id, { ...outcome, durationMs: elapsed() }, tx)))
          throw new CommittedElsewhere();
        emit({ type: "turn_cancelled", reason: "Cancelled by request", durationMs: elapsed() });
      });
      await deps.assets.settleCandidates(run.id, false);
      span.end("error", { cancelled: true });
      return;
    }
    const memory = error instanceof SandboxKilled && error.reason === "memory";
    const message = stopped?.message(policy) ?? ((error as Error).message || "The turn failed");
    const code = stopped?.code ?? (memory ? "sandbox_memory_limit" : "execution_failed");
    const failure: TurnEvent = { type: "turn_error", message, code, durationMs: elapsed() };
    await recorder.commit(async (tx) => {
      const parts = assistantParts([...live.events, failure], "failed");
      const outcome = { status: "failed", parts, usage: turn.usage.snapshot(), errorCode: code } as const;
      if (!(await deps.runs.commit(run.id, { ...outcome, errorMessage: message, durationMs: elapsed() }, tx)))
        throw new CommittedElsewhere();
      emit(failure);
    });
    await deps.assets.settleCandidates(run.id, false);
    deps.analytics.capture("turn_failed", { phase: "stream", code });
    deps.log.warn("turn failed", { runId: run.id, error: message });
    span.end("error", { error: message });
  }
}

/** The run's outcome was committed by another instance: this one's commit is rolled back. */
class CommittedElsewhere extends Error {}

/** Readers of the run here end with the terminal event the other instance logged (the run's error). */
async function endedElsewhere(deps: TurnExecutionDeps, live: LiveRun, durationMs: number): Promise<void> {
  const row = await deps.runs.byId(live.id).catch(() => undefined);
  live.push({
    type: "turn_error",
    message: row?.error_message ?? "The server stopped during this turn",
    code: row?.error_code ?? "interrupted",
    durationMs: row?.duration_ms ?? durationMs,
  });
}
