/**
 * The one reader of Atrium's streamed bodies, shared by the web UI, the terminal client and the tests:
 * lines of a byte stream, NDJSON values (chat) and server-sent events (turns, search, attach). common/
 * holds runtime code any side may import; it imports nothing of the repository (docs/design.md §14).
 *
 * Lines end at LF, CRLF or a lone CR (the SSE grammar; NDJSON never holds a raw CR inside a value); the
 * last line counts even without a newline. A line longer than `maxLine` characters throws instead of
 * growing without bound, so a broken or hostile server cannot fill the client's memory with one line.
 * Leaving a loop early cancels the body, which closes the connection.
 */

/** The longest line read by default: far above any event the server sends (a whole tool output). */
export const MAX_LINE = 32 * 1024 * 1024;

export interface StreamOptions {
  /** The longest line, in characters; a longer one throws `LineTooLongError`. */
  maxLine?: number;
}

/** A line longer than the reader's cap (it is not read to its end). */
export class LineTooLongError extends Error {
  constructor(readonly maxLine: number) {
    super(`a streamed line is longer than ${maxLine} characters`);
    this.name = "LineTooLongError";
  }
}

/** The decoded lines of a byte stream, without their line ends, as they arrive. */
export async function* streamLines(
  body: ReadableStream<Uint8Array>,
  options: StreamOptions = {},
): AsyncGenerator<string> {
  const maxLine = options.maxLine ?? MAX_LINE;
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let carry = "";
  // A chunk that ended in CR: an LF opening the next chunk belongs to the same line end.
  let afterCr = false;
  const lineEnd = /[\r\n]/g;
  function* split(text: string): Generator<string> {
    if (!text) return;
    let start = 0;
    if (afterCr && text.startsWith("\n")) start = 1;
    afterCr = false;
    lineEnd.lastIndex = start;
    for (let m = lineEnd.exec(text); m; m = lineEnd.exec(text)) {
      const line = carry + text.slice(start, m.index);
      carry = "";
      if (line.length > maxLine) throw new LineTooLongError(maxLine);
      yield line;
      start = m.index + 1;
      if (m[0] === "\r") {
        if (start === text.length) afterCr = true;
        else if (text[start] === "\n") start += 1;
      }
      lineEnd.lastIndex = start;
    }
    carry += text.slice(start);
    if (carry.length > maxLine) throw new LineTooLongError(maxLine);
  }
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read())
      yield* split(decoder.decode(read.value, { stream: true }));
    yield* split(decoder.decode());
    if (carry) yield carry;
  } finally {
    // Left early (the last frame came, the caller stopped, a line was too long): close the connection.
    reader.cancel().catch(() => {});
  }
}

/** Each JSON value of an NDJSON body (one a line; blank lines skipped). */
export async function* ndjson<T = unknown>(
  body: ReadableStream<Uint8Array>,
  options?: StreamOptions,
): AsyncGenerator<T> {
  for await (const line of streamLines(body, options)) {
    if (!line.trim()) continue;
    yield JSON.parse(line) as T;
  }
}

/** One server-sent event: `data` is its data lines joined by LF (parse it yourself when it is JSON). */
export interface SseEvent {
  /** The `event:` field; absent on unnamed events (the turn stream's compatibility chunks, `[DONE]`). */
  event?: string;
  data: string;
  /** The `id:` field, when the event carried one. */
  id?: string;
}

/**
 * The events of a `text/event-stream` body, as the SSE grammar reads them: `field: value` lines (one
 * space after the colon dropped), comment lines (`: keep-alive`) skipped, a blank line dispatching the
 * event; events without data are dropped. An event left open when the body ends is still delivered.
 */
export async function* sseEvents(
  body: ReadableStream<Uint8Array>,
  options?: StreamOptions,
): AsyncGenerator<SseEvent> {
  let event: string | undefined;
  let id: string | undefined;
  let data: string[] = [];
  const dispatch = (): SseEvent | undefined => {
    const out = data.length
      ? {
          ...(event !== undefined ? { event } : {}),
          data: data.join("\n"),
          ...(id !== undefined ? { id } : {}),
        }
      : undefined;
    event = undefined;
    id = undefined;
    data = [];
    return out;
  };
  for await (const line of streamLines(body, options)) {
    if (line === "") {
      const out = dispatch();
      if (out) yield out;
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + (line[colon + 1] === " " ? 2 : 1));
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "id") id = value;
    // `retry:` and unknown fields are ignored, as the grammar says.
  }
  const out = dispatch();
  if (out) yield out;
}
