/** /api/attach: a second client sees another client's turn live over SSE, and resumes with Last-Event-ID. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { listen } from "../helpers/listen.ts";
import { type Event, lines, readChunks } from "../helpers/streams.ts";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
beforeAll(async () => {
  t = await createTestApp();
  server = listen(t);
});
afterAll(async () => {
  await server.stop();
  await t.close();
});

interface Frame {
  id?: string;
  event?: string;
  data: Event;
}

function frames(response: Response) {
  if (!response.body) throw new Error("no body");
  const iterator = readChunks(response.body, "\n\n")[Symbol.asyncIterator]();
  return {
    async next(): Promise<Frame> {
      for (;;) {
        const { value, done } = await iterator.next();
        if (done) throw new Error("stream ended");
        if (value.startsWith(":")) continue;
        const frame: Frame = { data: {} };
        for (const line of value.split("\n")) {
          const at = line.indexOf(": ");
          const [key, rest] = [line.slice(0, at), line.slice(at + 2)];
          if (key === "id") frame.id = rest;
          else if (key === "event") frame.event = rest;
          else if (key === "data") frame.data = JSON.parse(rest);
        }
        return frame;
      }
    },
    async until(type: string): Promise<Frame[]> {
      const seen: Frame[] = [];
      for (;;) {
        const frame = await this.next();
        seen.push(frame);
        if (frame.event === type) return seen;
      }
    },
    close: () => iterator.return?.(undefined),
  };
}

const attach = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/api/attach`, postJson(body, headers));

test("an attached client sees another client's turn live, then resumes from Last-Event-ID", async () => {
  const model = scripted(t, [
    fauxAssistantMessage("first turn"),
    fauxAssistantMessage("second turn, seen live"),
  ]);
  const first = await lines(await t.request("/api/chat", postJson({ message: "hello", model: model.id })));
  const sessionId = first[0]?.sessionId;

  const response = await attach({ sessionId });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  const stream = frames(response);
  const hello = await stream.next();
  expect(hello.event).toBe("attached");
  expect(hello.data).toMatchObject({ sessionId });

  // Another client runs a turn in the same session.
  const turn = fetch(
    `${server.url}/api/chat`,
    postJson({ sessionId, message: "again", model: model.id }),
  ).then((r) => r.text());
  const seen = await stream.until("done");
  await turn;
  expect(seen[0]?.event).toBe("start");
  expect(
    seen
      .filter((f) => f.event === "delta")
      .map((f) => f.data.text)
      .join(""),
  ).toBe("second turn, seen live");
  expect(seen.at(-1)?.data).toMatchObject({ type: "done", sessionId });
  await stream.close();

  // Resume: ask for everything after the start event of that turn.
  const startId = seen[0]?.id;
  const resumed = frames(await attach({ sessionId }, { "last-event-id": String(startId) }));
  expect((await resumed.next()).event).toBe("attached");
  const replay = await resumed.until("done");
  expect(replay[0]?.event).toBe("delta");
  expect(Number(replay[0]?.id)).toBe(Number(startId) + 1);
  expect(
    replay
      .filter((f) => f.event === "delta")
      .map((f) => f.data.text)
      .join(""),
  ).toBe("second turn, seen live");
  await resumed.close();
  model.dispose();
});
