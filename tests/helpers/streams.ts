/**
 * The tests' views of streamed responses, over the one reader the clients use (common/streams.ts): raw
 * lines and raw SSE blocks (for assertions on the bytes of the wire, comments included), NDJSON events
 * (all at once, or one at a time to act in the middle of a stream), and SSE frames.
 */
import { ndjson, type SseEvent, sseEvents, streamLines } from "../../common/streams.ts";

/**
 * Reads a streamed body line by line, or (with `"\n\n"`) block by block: each SSE block's lines joined,
 * as the server wrote them, keep-alive comments included.
 */
export async function* readChunks(
  body: ReadableStream<Uint8Array>,
  separator: "\n" | "\n\n" = "\n",
): AsyncGenerator<string> {
  if (separator === "\n") {
    yield* streamLines(body);
    return;
  }
  let block: string[] = [];
  for await (const line of streamLines(body)) {
    if (line !== "") block.push(line);
    else if (block.length) {
      yield block.join("\n");
      block = [];
    }
  }
  if (block.length) yield block.join("\n");
}

// biome-ignore lint/suspicious/noExplicitAny: events are checked field by field in the tests
export type Event = Record<string, any>;

/** Every NDJSON line of a response. */
export async function lines(response: Response): Promise<Event[]> {
  const out: Event[] = [];
  if (response.body) for await (const event of ndjson<Event>(response.body)) out.push(event);
  return out;
}

/** Reads NDJSON events one at a time, so a test can act in the middle of a stream. */
export function eventReader(response: Response) {
  if (!response.body) throw new Error("no body");
  const iterator = ndjson<Event>(response.body);
  const seen: Event[] = [];
  return {
    seen,
    async next(): Promise<Event | undefined> {
      const { value, done } = await iterator.next();
      if (done) return undefined;
      seen.push(value);
      return value;
    },
    /** Reads until an event matches; returns it. */
    async until(match: (e: Event) => boolean): Promise<Event> {
      for (;;) {
        const event = await this.next();
        if (!event)
          throw new Error(`stream ended before a matching event; saw ${seen.map((e) => e.type).join(",")}`);
        if (match(event)) return event;
      }
    },
    async rest(): Promise<Event[]> {
      while (await this.next()) {}
      return seen;
    },
    cancel: () => iterator.return(undefined),
  };
}

export type Frame = SseEvent;

/** Every SSE frame of a response body, in order (comments skipped). */
export async function readFrames(response: Response): Promise<Frame[]> {
  const frames: Frame[] = [];
  if (response.body) for await (const frame of sseEvents(response.body)) frames.push(frame);
  return frames;
}
