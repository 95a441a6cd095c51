/**
 * Reading a streamed answer frame by frame: Server-Sent Events (the turns stream: `event:` and `data:`
 * lines, a blank line between frames, `data: [DONE]` last) and NDJSON (the chat stream: one JSON
 * object a line). Both yield as bytes arrive, so the terminal renders while the server works.
 */

export interface SseFrame {
  /** The `event:` line; frames without one are the stream's compatibility chunks. */
  event?: string;
  data: string;
}

async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  const reader = body.getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      buffer += decoder.decode(read.value, { stream: true });
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        yield buffer.slice(0, newline).replace(/\r$/, "");
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
      }
    }
    buffer += decoder.decode();
    if (buffer) yield buffer;
  } finally {
    // Left early (the stream's last frame came, or the reader stopped): close the connection.
    reader.cancel().catch(() => {});
  }
}

export async function* sseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  let event: string | undefined;
  let data: string[] = [];
  for await (const line of lines(body)) {
    if (line === "") {
      if (data.length) yield { event, data: data.join("\n") };
      event = undefined;
      data = [];
    } else if (line.startsWith(":")) {
      // a keep-alive comment
    } else if (line.startsWith("event:")) {
      event = line.slice(6).trim();
    } else if (line.startsWith("data:")) {
      data.push(line.slice(5).replace(/^ /, ""));
    }
  }
  if (data.length) yield { event, data: data.join("\n") };
}

export async function* ndjsonObjects(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  for await (const line of lines(body)) {
    if (!line.trim()) continue;
    yield JSON.parse(line);
  }
}
