/** Serves a test app on a free loopback port, for streams and WebSockets that need a real socket. */
import type { TestApp } from "./app.ts";

export function listen(t: TestApp): { url: string; stop(): Promise<void> } {
  t.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false, development: false });
  const server = t.app.server;
  if (!server) throw new Error("not listening");
  return { url: `http://127.0.0.1:${server.port}`, stop: async () => void (await server.stop(true)) };
}

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
