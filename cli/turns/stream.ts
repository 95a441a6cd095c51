/**
 * One turn, start to end, over a connection that may drop. The POST carries an Idempotency-Key; when
 * the stream breaks before its terminal event, the same POST is sent again with the same key: the
 * server then follows the still-running turn from its first event, or replays the committed one. Events
 * already handed on are skipped by position (the server sends a turn's events in one stored order), so
 * nothing shows twice and nothing runs twice.
 */

import { sseEvents } from "../../common/streams.ts";
import type { TurnStreamEvent as TurnEvent } from "../../schemas/turn-stream.ts";
import { type Api, ApiError } from "../api.ts";

/** The turn has ended once one of these came (a failed preparation adds turn_finish after turn_error). */
const TERMINAL = new Set(["turn_finish", "turn_error", "turn_cancelled"]);

/** A frame's data that is an event (the typed frames carry only the turn's spec events). */
function isTurnEvent(value: unknown): value is TurnEvent {
  return (
    typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"
  );
}

export interface TurnInput {
  text: string;
  attachment_ids?: string[];
}

export interface RunTurnOptions {
  api: Api;
  sessionId: string;
  input: TurnInput;
  /** The Idempotency-Key; a fresh one by default. */
  key?: string;
  onEvent(event: TurnEvent): void;
  /** Told before each reconnection (attempt 1, 2, ...) and why. */
  onReconnect?(attempt: number, why: string): void;
  /** Stops following the turn (the turn itself goes on: cancelling is a separate request). */
  signal?: AbortSignal;
  /** Waits between reconnections; their count bounds the attempts without progress. */
  retryDelaysMs?: number[];
}

const DEFAULT_DELAYS = [250, 500, 1000, 2000, 4000, 8000];
/** Gateway answers that say "try again", unlike the turn's own refusals (4xx). */
const TRANSIENT = new Set([502, 503, 504]);

function abortable(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Streams the turn to `onEvent` until its terminal event; throws an ApiError when it cannot. */
export async function runTurn(options: RunTurnOptions): Promise<void> {
  const { api, sessionId, input, onEvent, signal } = options;
  const key = options.key ?? crypto.randomUUID();
  const delays = options.retryDelaysMs ?? DEFAULT_DELAYS;
  const path = `/api/sessions/${encodeURIComponent(sessionId)}/turns`;
  let delivered = 0;
  let connected = false;
  let attempt = 0;
  /** A terminal event came: a stream cut after it loses nothing (at most a turn_finish after turn_error). */
  let finished = false;
  for (;;) {
    let seen = 0;
    let progressed = false;
    let ended = false;
    let why = "the stream ended early";
    try {
      const response = await api.stream(
        path,
        input,
        { "idempotency-key": key, accept: "text/event-stream" },
        signal,
      );
      connected = true;
      if (!response.body) throw new ApiError("empty_stream", "the server answered without a stream");
      for await (const frame of sseEvents(response.body)) {
        if (frame.data === "[DONE]") {
          ended = true;
          break;
        }
        if (!frame.event) continue;
        const event: unknown = JSON.parse(frame.data);
        if (!isTurnEvent(event)) continue;
        // Preparation keep-alives are transient: never counted, shown as they come.
        if (event.type === "turn_status") {
          if (delivered === 0) onEvent(event);
          continue;
        }
        seen += 1;
        if (seen <= delivered) continue;
        delivered = seen;
        progressed = true;
        onEvent(event);
        if (TERMINAL.has(event.type)) finished = true;
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof ApiError) {
        const transient = error.code === "connection_failed" ? connected : TRANSIENT.has(error.status);
        if (!transient) throw error;
      }
      why = (error as Error).message || String(error);
    }
    if (ended || finished || signal?.aborted) return;
    if (progressed) attempt = 0;
    if (attempt >= delays.length)
      throw new ApiError(
        "connection_lost",
        `lost the turn's stream ${delays.length + 1} times in a row (${why}); it may still be running: ` +
          `resume session ${sessionId} to see it`,
      );
    options.onReconnect?.(attempt + 1, why);
    await abortable(delays[attempt] ?? 1000, signal);
    attempt += 1;
    if (signal?.aborted) return;
  }
}
