/**
 * A committed run replayed for a repeated Idempotency-Key: its stored events, always closed by the
 * spec's terminal shape, also for a run that failed in preparation (turn_error, then turn_finish) or
 * was cut by a crash (no terminal event was stored).
 */
import { expandStored } from "../runtime/event-budget.ts";
import { TERMINAL_TYPES, type TurnEvent } from "../runtime/events.ts";
import type { RunRow } from "../stores/runs.ts";

export function replayable(stored: TurnEvent[], run: RunRow): TurnEvent[] {
  const out = expandStored(stored);
  const last = out.at(-1);
  if (!last || !TERMINAL_TYPES.has(last.type)) {
    out.push({
      type: "turn_error",
      message: run.error_message ?? "The turn did not finish",
      code: run.error_code ?? "execution_failed",
      durationMs: run.duration_ms ?? 0,
    });
  }
  if (out[0]?.type !== "turn_start") {
    out.push({
      type: "turn_finish",
      finishReason: "error",
      status: "failed",
      checkpointVersion: 0,
      durationMs: run.duration_ms ?? 0,
      traceId: null,
    });
  }
  return out;
}
