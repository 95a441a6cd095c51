/** Serves a test app on a free loopback port, for streams and WebSockets that need a real socket. */
import type { TestApp } from "./app.ts";

/** `port` 0 (the default) takes any free one. */
export function listen(t: TestApp, port = 0): { url: string; stop(): Promise<void> } {
  t.app.listen({ hostname: "127.0.0.1", port, reusePort: false, development: false });
  const server = t.app.server;
  if (!server) throw new Error("not listening");
  return { url: `http://127.0.0.1:${server.port}`, stop: async () => void (await server.stop(true)) };
}
