/** POST /api/chat streams pi's events as NDJSON: text, thinking, tools, errors, and the mirror records the run. */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { fauxAssistantMessage, fauxText, fauxThinking, fauxToolCall } from "@mariozechner/pi-ai";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { chat, scripted, types } from "../helpers/chat.ts";
import { type Event, lines } from "../helpers/streams.ts";

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
  // Named relative to the owner's sessions folder: no server path in a response.
  expect(events[0]?.sessionFile).toMatch(/^[\w.-]+\.jsonl$/);
  expect(existsSync(`${t.dataDir}/sessions/local/${events[0]?.sessionFile}`)).toBe(true);
  const text = events
    .filter((e) => e.type === "delta")
    .map((e) => e.text)
    .join("");
  expect(text).toBe("Hello from the scripted model, streamed in pieces.");
  expect(types(events).filter((x) => x === "done" || x === "error")).toEqual(["done"]);
  const done = events.at(-1);
  expect(done).toMatchObject({ type: "done", runId: events[0]?.runId, sessionId: events[0]?.sessionId });
  // A UI message (what chat clients render), not the runtime's internal message.
  expect(done?.message).toEqual({
    id: events[0]?.runId,
    role: "assistant",
    parts: [{ type: "text", text: "Hello from the scripted model, streamed in pieces." }],
    createdAt: expect.any(Number),
  });
  model.dispose();
});

test("thinking is streamed as the accumulated reasoning text", async () => {
  const model = scripted(
    t,
    [fauxAssistantMessage([fauxThinking("first think, then answer"), fauxText("Answer.")])],
    {
      reasoning: true,
    },
  );
  const events = await lines(
    await chat(t, {
      message: "think",
      model: { provider: model.id.split("/")[0], id: "scripted", thinkingLevel: "high" },
    }),
  );
  const thinking = events.filter((e) => e.type === "thinking");
  expect(thinking.length).toBeGreaterThan(0);
  expect(thinking.at(-1)?.text).toBe("first think, then answer");
  // In done.message the thinking is a tool-Thinking part with an id derived from the message's.
  const done = events.at(-1);
  expect(done?.message.parts).toEqual([
    {
      type: "tool-Thinking",
      toolCallId: `${done?.runId}-thinking-0`,
      state: "output-available",
      input: { thought: "first think, then answer" },
      output: "first think, then answer",
    },
    { type: "text", text: "Answer." },
  ]);
  // Accumulated: each chunk extends the previous one.
  for (let i = 1; i < thinking.length; i++)
    expect(thinking[i]?.text.startsWith(thinking[i - 1]?.text)).toBe(true);
  expect(events.at(-1)?.type).toBe("done");
  model.dispose();
});

test("a tool call and its result stream as tool parts; the mirror keeps the output and the file written", async () => {
  const model = scripted(t, [
    fauxAssistantMessage(
      [fauxToolCall("write", { path: "notes/todo.txt", content: "buy milk\n" }, { id: "call-1" })],
      {
        stopReason: "toolUse",
      },
    ),
    fauxAssistantMessage("Written."),
  ]);
  const events = await lines(await chat(t, { message: "write a note", model: model.id }));
  const parts = events.filter((e) => e.type === "tool").map((e) => e.part);
  // UI tool parts: tool-<Name>, input-available when it starts, output-available with its output at the end.
  expect(parts[0]).toMatchObject({
    type: "tool-Write",
    toolCallId: "call-1",
    toolName: "write",
    state: "input-available",
    input: { path: "notes/todo.txt", file_path: "notes/todo.txt", content: "buy milk\n" },
  });
  expect(parts[0]).not.toHaveProperty("output");
  expect(parts[1]).toMatchObject({
    type: "tool-Write",
    toolCallId: "call-1",
    toolName: "write",
    state: "output-available",
    output: { content: "buy milk\n" },
    isError: false,
  });
  // done.message is the whole turn as one UI message: the call with its result, then the text.
  expect(events.at(-1)?.message).toMatchObject({
    id: events[0]?.runId,
    role: "assistant",
    parts: [
      { type: "tool-Write", toolCallId: "call-1", state: "output-available" },
      { type: "text", text: "Written." },
    ],
  });
  expect(events.at(-1)?.type).toBe("done");
  // The agent works in the owner's workspace, never the server's directory.
  expect(await Bun.file(`${t.dataDir}/workspaces/local/notes/todo.txt`).text()).toBe("buy milk\n");

  const runId = events[0]?.runId;
  const provenance = await t.json<Event>(`/api/chat/provenance?runId=${runId}`);
  expect(provenance.status).toBe(200);
  expect(provenance.body).toMatchObject({ runId, status: "completed", model: model.id, mode: "agent" });
  expect(provenance.body.toolCalls).toHaveLength(1);
  expect(provenance.body.toolCalls[0]).toMatchObject({
    toolCallId: "call-1",
    toolName: "write",
    isError: false,
  });
  expect(JSON.stringify(provenance.body.toolCalls[0].output)).toContain("notes/todo.txt");
  expect(provenance.body.filesTouched).toEqual([
    expect.objectContaining({ path: "notes/todo.txt", toolName: "write", toolCallId: "call-1" }),
  ]);
  expect(provenance.body.settings).toMatchObject({ retry: { enabled: true }, compaction: { enabled: true } });
  expect(typeof provenance.body.durationMs).toBe("number");

  const runs = await t.json<{ runs: Event[] }>(`/api/chat/runs?sessionId=${events[0]?.sessionId}`);
  expect(runs.body.runs.map((r) => r.runId)).toEqual([runId]);
  model.dispose();
});

test("a model error mid-stream ends with an error event and a failed run, never a hung stream", async () => {
  const model = scripted(t, [
    fauxAssistantMessage("partial answer", {
      stopReason: "error",
      errorMessage: "invalid_request: model exploded",
    }),
  ]);
  const events = await lines(await chat(t, { message: "fail please", model: model.id }));
  expect(events[0]?.type).toBe("start");
  const last = events.at(-1);
  expect(last).toMatchObject({ type: "error", runId: events[0]?.runId });
  expect(last?.message).toContain("model exploded");
  expect(types(events)).not.toContain("done");
  const provenance = await t.json<Event>(`/api/chat/provenance?runId=${events[0]?.runId}`);
  expect(provenance.body).toMatchObject({ status: "failed" });
  expect(provenance.body.error).toContain("model exploded");
  model.dispose();
});

test("without a configured provider the offline model answers honestly", async () => {
  const events = await lines(await chat(t, { message: "anyone there?" }));
  const text = events
    .filter((e) => e.type === "delta")
    .map((e) => e.text)
    .join("");
  expect(text).toContain("No model is configured");
  expect(events.at(-1)?.type).toBe("done");
});

test("re-running a recorded run streams a new run with the same prompt", async () => {
  const model = scripted(t, [fauxAssistantMessage("one"), fauxAssistantMessage("two")]);
  const first = await lines(await chat(t, { message: "say a number", model: model.id }));
  const again = await lines(
    await t.request("/api/chat/run", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ runId: first[0]?.runId }),
    }),
  );
  expect(again[0]).toMatchObject({ type: "start", sessionId: first[0]?.sessionId });
  expect(again[0]?.runId).not.toBe(first[0]?.runId);
  expect(again.at(-1)).toMatchObject({ type: "done" });
  expect(
    again
      .filter((e) => e.type === "delta")
      .map((e) => e.text)
      .join(""),
  ).toBe("two");
  const runs = await t.json<{ runs: Event[] }>(`/api/chat/runs?sessionId=${first[0]?.sessionId}`);
  expect(runs.body.runs.map((r) => r.prompt)).toEqual(["say a number", "say a number"]);
  expect(
    (
      await t.request("/api/chat/run", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ runId: "nope" }),
      })
    ).status,
  ).toBe(404);
  model.dispose();
});
