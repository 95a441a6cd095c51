/**
 * A turn's events as SSE frames (docs/design.md §10): by default each spec event (`event: <type>`)
 * followed by its UIMessageChunk compatibility frames; the `ui-message-stream` form carries the chunks
 * only, every spec event without a UI chunk travelling as a `data-<type>` part.
 */
import type { SseFrame } from "../../http/sse.ts";
import { CompatEncoder, type TurnEvent } from "../runtime/events.ts";

export type TurnStreamForm = "events" | "ui-message-stream";

export function turnFrames(
  events: AsyncIterable<TurnEvent>,
  form: TurnStreamForm,
): (signal: AbortSignal) => AsyncIterable<SseFrame> {
  const compatOnly = form === "ui-message-stream";
  return async function* () {
    const encoder = new CompatEncoder();
    for await (const event of events) {
      if (!compatOnly) yield { event: event.type, data: event };
      for (const chunk of encoder.chunks(event)) yield { data: chunk };
    }
  };
}
