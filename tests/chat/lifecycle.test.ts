/** Compaction and retry events, forced with small settings and scripted failures. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Context, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { chat, scripted, types } from "../helpers/chat.ts";
import { lines } from "../helpers/streams.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const settings = (update: unknown) => t.json("/api/chat/settings", postJson({ settings: update }));

test("a retryable provider error shows retry start and end, then the turn completes", async () => {
  expect((await settings({ retry: { enabled: true, maxRetries: 2, baseDelayMs: 1 } })).status).toBe(200);
  const model = scripted(t, [
    fauxAssistantMessage("", { stopReason: "error", errorMessage: "503 service unavailable" }),
    fauxAssistantMessage("Recovered."),
  ]);
  const events = await lines(await chat(t, { message: "flaky", model: model.id }));
  const retries = events.filter((e) => e.type === "retry");
  expect(retries[0]).toMatchObject({ phase: "start", attempt: 1, maxAttempts: 2, delayMs: 1 });
  expect(retries[0]?.errorMessage).toContain("503");
  expect(retries.at(-1)).toMatchObject({ phase: "end", success: true });
  expect(events.at(-1)?.type).toBe("done");
  expect(
    events
      .filter((e) => e.type === "delta")
      .map((e) => e.text)
      .join(""),
  ).toBe("Recovered.");
  model.dispose();
});

test("retries exhausted: a final error event and a failed run", async () => {
  const model = scripted(t, [
    fauxAssistantMessage("", { stopReason: "error", errorMessage: "429 rate limit" }),
    fauxAssistantMessage("", { stopReason: "error", errorMessage: "429 rate limit" }),
    fauxAssistantMessage("", { stopReason: "error", errorMessage: "429 rate limit" }),
  ]);
  const events = await lines(await chat(t, { message: "flaky", model: model.id }));
  expect(events.filter((e) => e.type === "retry" && e.phase === "end").at(-1)).toMatchObject({
    success: false,
  });
  expect(events.at(-1)).toMatchObject({ type: "error", runId: events[0]?.runId });
  expect(types(events)).not.toContain("done");
  model.dispose();
});

test("a context over the threshold compacts after the turn: compaction start and end before done", async () => {
  expect(
    (await settings({ compaction: { enabled: true, reserveTokens: 49_500, keepRecentTokens: 10 } })).status,
  ).toBe(200);
  const reply = (context: Context) => {
    const text = JSON.stringify(context.messages.at(-1) ?? "");
    return fauxAssistantMessage(
      /summar/i.test(`${context.systemPrompt} ${text}`) ? "Summary: we talked." : `Answer ${"x ".repeat(50)}`,
    );
  };
  const model = scripted(t, [reply, reply, reply, reply], { contextWindow: 50_000 });
  const first = await lines(await chat(t, { message: "one", model: model.id }));
  const second = await lines(
    await chat(t, { sessionId: first[0]?.sessionId, message: "two", model: model.id }),
  );
  const events = [...first, ...second];
  const compaction = events.filter((e) => e.type === "compaction");
  expect(compaction[0]).toMatchObject({ phase: "start", reason: "threshold" });
  const end = compaction.find((e) => e.phase === "end");
  expect(end).toMatchObject({ phase: "end", reason: "threshold", aborted: false });
  expect(end?.errorMessage).toBeUndefined();
  // The summary is in the session file: the session now starts from it.
  const file = await Bun.file(`${t.dataDir}/sessions/local/${first[0]?.sessionFile}`).text();
  expect(file).toContain('"type":"compaction"');
  const stream = types(second).includes("compaction") ? second : first;
  expect(types(stream).lastIndexOf("compaction")).toBeLessThan(types(stream).indexOf("done"));
  model.dispose();
  await settings({ compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 } });
});
