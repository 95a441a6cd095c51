/** POST /api/chat streams pi's events as NDJSON: text, thinking, tools, errors, and the mirror records the run. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { fauxAssistantMessage, fauxText, fauxThinking, fauxToolCall } from "@mariozechner/pi-ai";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { chat, lines, scripted, types } from "./helpers.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("a text turn: start first, deltas, exactly one done with the final message", async () => {
  const model = scripted(t, [fauxAssistantMessage("Hello from the scripted model, streamed in pieces.")]);
  const response = await chat(t, { message: "hi", model: model.id });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("application/x-ndjson");
  const events = await lines(response);
  expect(events[0]).toMatchObject({ type: "start" });
  expect(typeof events[0]?.runId).toBe("string");
  expect(events[0]?.sessionFile).toStartWith(`${t.dataDir}/sessions/local/`);
  const text = events.filter((e) => e.type === "delta").map((e) => e.text).join("");
  expect(text).toBe("Hello from the scripted model, streamed in pieces.");
  expect(types(events).filter((x) => x === "done" || x === "error")).toEqual(["done"]);
  const done = events.at(-1);
  expect(done).toMatchObject({ type: "done", runId: events[0]?.runId, sessionId: events[0]?.sessionId });
  expect(done?.message.role).toBe("assistant");
  model.dispose();
});
