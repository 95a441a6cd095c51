/**
 * Opening a turn (spec "Turn stream lifecycle"): preparation keep-alives while the turn is prepared
 * (turn-preparation.ts), then either the live run, a replay of the committed run for a repeated
 * Idempotency-Key, or a preparation failure (`turn_error` then `turn_finish`) with the spec's messages.
 */
import type { PolicySettings } from "../../config/policy-schema.ts";
import type { Logger } from "../../log.ts";
import type { TurnAnalytics } from "../runtime/analytics.ts";
import type { TurnEvent } from "../runtime/events.ts";
import { keepAlive, SandboxLine } from "./keep-alive.ts";
import { type Prepared, TurnPreparationError, type TurnSubmission } from "./prepared-turn.ts";

export interface TurnOpenerDeps {
  /** Read per turn: the heartbeat and the preparation deadline. */
  settings: Pick<PolicySettings, "runtime">;
  analytics: Pick<TurnAnalytics, "capture">;
  log: Logger;
  /** Prepares a submission (turn-preparation.ts, bound to its dependencies). */
  prepare(submission: TurnSubmission, timedOut: AbortSignal, line: SandboxLine): Promise<Prepared>;
}

export class TurnOpener {
  constructor(private readonly deps: TurnOpenerDeps) {}

  /**
   * The whole stream of one POST: preparation keep-alives, then the turn's events. `signal` is the
   * client's (gone: stop streaming, the turn goes on); at `shutdown` the stream still ends with one
   * terminal event (the live run fails with `server_stopping`) before the server closes it.
   */
  async *open(
    submission: TurnSubmission,
    signal: AbortSignal,
    shutdown: AbortSignal,
  ): AsyncGenerator<TurnEvent> {
    const { runtime } = this.deps.settings;
    const started = Date.now();
    const line = new SandboxLine();
    const timeout = new AbortController();
    const outcome = yield* keepAlive(this.deps.prepare(submission, timeout.signal, line), {
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

  /** A preparation that failed: the spec's closing pair; an unexpected error is logged and generic. */
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
