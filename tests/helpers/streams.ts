/**
 * Readers for streamed responses: raw chunks split on a separator, NDJSON events (all at once, or one at
 * a time to act in the middle of a stream), and SSE frames.
 */

/** Reads a streamed body line by line (or frame by frame with a custom separator). */
export async function* readChunks(
  body: ReadableStream<Uint8Array>,
  separator = "\n",
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let at = buffer.indexOf(separator);
    while (at !== -1) {
      yield buffer.slice(0, at);
      buffer = buffer.slice(at + separator.length);
      at = buffer.indexOf(separator);
    }
  }
  if (buffer) yield buffer;
}

// biome-ignore lint/suspicious/noExplicitAny: events are checked field by field in the tests
export type Event = Record<string, any>;

/** Every NDJSON line of a response. */
export async function lines(response: Response): Promise<Event[]> {
  const out: Event[] = [];
  if (!response.body) return out;
  for await (const line of readChunks(response.body)) if (line.trim()) out.push(JSON.parse(line));
  return out;
}

/** Reads NDJSON events one at a time, so a test can act in the middle of a stream. */
export function eventReader(response: Response) {
  if (!response.body) throw new Error("no body");
  const iterator = readChunks(response.body)[Symbol.asyncIterator]();
  const seen: Event[] = [];
  return {
    seen,
    async next(): Promise<Event | undefined> {
      for (;;) {
        const { value, done } = await iterator.next();
        if (done) return undefined;
        if (value.trim()) {
          const event = JSON.parse(value) as Event;
          seen.push(event);
          return event;
        }
      }
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
    cancel: () => iterator.return?.(undefined),
  };
}

export interface Frame {
  event?: string;
  data: string;
}

/** Every SSE frame of a response body, in order (comments skipped). */
export async function readFrames(response: Response): Promise<Frame[]> {
  const text = await response.text();
  const frames: Frame[] = [];
  for (const block of text.split("\n\n")) {
    if (!block.trim()) continue;
    const frame: Frame = { data: "" };
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      if (line.startsWith("event: ")) frame.event = line.slice(7);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
    }
    if (data.length === 0) continue;
    frame.data = data.join("\n");
    frames.push(frame);
  }
  return frames;
}
