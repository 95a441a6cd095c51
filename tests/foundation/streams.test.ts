/** NDJSON and SSE writers (docs/design.md §7), over a real listening port where it matters. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { ndjsonResponse } from "../../server/http/ndjson.ts";
import { encodeSse, sseResponse } from "../../server/http/sse.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { readChunks } from "../helpers/streams.ts";

/** What the producers behind the probe routes did, for the tests to inspect. */
const state = {
  produced: 0,
  aborted: false,
  finished: false,
  gate: Promise.withResolvers<void>(),
  stopped: Promise.withResolvers<void>(),
};
function reset() {
  Object.assign(state, {
    produced: 0,
    aborted: false,
    finished: false,
    gate: Promise.withResolvers<void>(),
    stopped: Promise.withResolvers<void>(),
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function streamProbes() {
  return new Elysia({ name: "test/streams" })
    .get("/api/chat/__ndjson", ({ request }) =>
      ndjsonResponse(
        async function* (signal) {
          signal.addEventListener("abort", () => (state.aborted = true));
          try {
            yield { type: "start", n: ++state.produced };
            // The test releases the gate after seeing the first line; a producer always honours its signal.
            await Promise.race([
              state.gate.promise,
              new Promise((resolve) => signal.addEventListener("abort", resolve)),
            ]);
            if (signal.aborted) return;
            for (let i = 0; i < 3; i++) yield { type: "delta", n: ++state.produced };
            yield { type: "done" };
          } finally {
            state.finished = true;
            state.stopped.resolve();
          }
        },
        { signal: request.signal },
      ),
    )
    .get("/api/chat/__endless", ({ request }) =>
      ndjsonResponse(
        async function* (signal) {
          try {
            while (!signal.aborted) {
              yield { n: ++state.produced, pad: "x".repeat(1024) };
              await sleep(1);
            }
          } finally {
            state.aborted = signal.aborted;
            state.stopped.resolve();
          }
        },
        { signal: request.signal },
      ),
    )
    .get("/api/chat/__fails", () =>
      ndjsonResponse(
        async function* () {
          yield { type: "start" };
          throw new Error("model exploded");
        },
        { onError: (error) => [{ type: "error", message: (error as Error).message }] },
      ),
    )
    .get("/api/sessions/__sse", ({ request }) =>
      sseResponse(
        async function* () {
          yield { event: "turn_start", data: { type: "turn_start", runId: "r1" } };
          await sleep(120); // quiet long enough for a heartbeat
          yield { event: "text", data: "two\nlines", id: "7" };
        },
        { signal: request.signal, heartbeatMs: 40, done: true },
      ),
    );
}

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
beforeAll(async () => {
  t = await createTestApp({ plugins: [streamProbes] });
  server = listen(t);
});
afterAll(async () => {
  await server.stop();
  await t.close();
});

describe("NDJSON", () => {
  test("streams one JSON object per line, each flushed as it is produced", async () => {
    reset();
    const response = await fetch(`${server.url}/api/chat/__ndjson`);
    expect(response.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = readChunks(response.body!);
    // The first line arrives while the producer is still blocked: it was flushed on its own.
    expect(JSON.parse((await lines.next()).value)).toEqual({ type: "start", n: 1 });
    expect(state.produced).toBe(1);
    state.gate.resolve();
    const rest: unknown[] = [];
    for await (const line of lines) rest.push(JSON.parse(line));
    expect(rest).toEqual([
      { type: "delta", n: 2 },
      { type: "delta", n: 3 },
      { type: "delta", n: 4 },
      { type: "done" },
    ]);
    expect(state.finished).toBe(true);
  });

  test("a client disconnect aborts the producer and ends its work", async () => {
    reset();
    const client = new AbortController();
    const response = await fetch(`${server.url}/api/chat/__ndjson`, { signal: client.signal });
    const lines = readChunks(response.body!);
    await lines.next();
    client.abort();
    await state.stopped.promise;
    expect(state.aborted).toBe(true);
    expect(state.produced).toBe(1);
  });

  test("an endless producer stops when the client goes away", async () => {
    reset();
    const client = new AbortController();
    const response = await fetch(`${server.url}/api/chat/__endless`, { signal: client.signal });
    const lines = readChunks(response.body!);
    for (let i = 0; i < 5; i++) await lines.next();
    client.abort();
    // The producer's finally ran: it ended, it was not merely paused.
    await state.stopped.promise;
    expect(state.aborted).toBe(true);
  });

  test("backpressure: nothing is produced ahead of what the reader asks for", async () => {
    reset();
    const response = await t.request("/api/chat/__endless");
    const reader = response.body!.getReader();
    for (let i = 0; i < 3; i++) await reader.read();
    // An observation window, not a wait for an event: a producer that ignored backpressure would yield
    // an item per millisecond meanwhile. One item may be pending in the iterator.
    await sleep(30);
    expect(state.produced).toBeLessThanOrEqual(4);
    await reader.cancel();
    await state.stopped.promise;
    expect(state.aborted).toBe(true);
  });

  test("a producer that throws ends with the error event, never a hung stream", async () => {
    const response = await t.request("/api/chat/__fails");
    const lines: unknown[] = [];
    for await (const line of readChunks(response.body!)) lines.push(JSON.parse(line));
    expect(lines).toEqual([{ type: "start" }, { type: "error", message: "model exploded" }]);
  });
});

describe("SSE", () => {
  test("frames events, sends heartbeats while idle, and ends with [DONE]", async () => {
    const response = await fetch(`${server.url}/api/sessions/__sse`);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const frames: string[] = [];
    for await (const frame of readChunks(response.body!, "\n\n")) frames.push(frame);
    expect(frames[0]).toBe('event: turn_start\ndata: {"type":"turn_start","runId":"r1"}');
    expect(frames).toContain(": keep-alive");
    expect(frames.at(-2)).toBe("id: 7\nevent: text\ndata: two\ndata: lines");
    expect(frames.at(-1)).toBe("data: [DONE]");
  });

  test("encodeSse never lets a field break the framing", () => {
    expect(encodeSse({ event: "a\nb", data: { x: "line\nbreak" } })).toBe(
      'event: ab\ndata: {"x":"line\\nbreak"}\n\n',
    );
  });

  test("server shutdown ends open streams", async () => {
    const shutdown = new AbortController();
    const response = sseResponse(
      async function* (signal) {
        yield { data: "first" };
        await new Promise((resolve) => signal.addEventListener("abort", resolve));
      },
      { signal: shutdown.signal, heartbeatMs: 0 },
    );
    const frames = readChunks(response.body!, "\n\n");
    expect((await frames.next()).value).toBe("data: first");
    shutdown.abort();
    expect((await frames.next()).done).toBe(true);
  });
});
