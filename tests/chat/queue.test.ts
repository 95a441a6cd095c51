/** steer and followUp while a run streams: the second request answers one `queue` event; the running stream delivers it. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { chat, scripted, types } from "../helpers/chat.ts";
import { eventReader, lines } from "../helpers/streams.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test.each(["steer", "followUp"] as const)(
  "%s while streaming is queued, shown, then delivered in the same run",
  async (behavior) => {
    const model = scripted(
      t,
      [fauxAssistantMessage("slow ".repeat(60)), fauxAssistantMessage("Handled the queued message.")],
      { tokensPerSecond: 150 },
    );
    const reader = eventReader(await chat(t, { message: "start something long", model: model.id }));
    const start = await reader.until((e) => e.type === "start");
    await reader.until((e) => e.type === "delta");

    const queued = await lines(
      await chat(t, { sessionId: start.sessionId, message: "also do this", streamingBehavior: behavior }),
    );
    const key = behavior === "steer" ? "steering" : "followUp";
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ type: "queue", [key]: ["also do this"] });

    const events = await reader.rest();
    const queueEvents = events.filter((e) => e.type === "queue");
    expect(queueEvents[0]?.[key]).toEqual(["also do this"]);
    expect(queueEvents.at(-1)).toMatchObject({ steering: [], followUp: [] });
    const text = events
      .filter((e) => e.type === "delta")
      .map((e) => e.text)
      .join("");
    expect(text).toEndWith("Handled the queued message.");
    expect(types(events).filter((x) => x === "done" || x === "error")).toEqual(["done"]);
    expect(events.at(-1)?.runId).toBe(start.runId);

    const hydrated = await t.json<{ messages: { role: string; parts: unknown }[] }>(
      `/api/chat/session?sessionId=${start.sessionId}`,
    );
    expect(hydrated.body.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(JSON.stringify(hydrated.body.messages[2]?.parts)).toContain("also do this");
    model.dispose();
  },
);

test("a second message without streamingBehavior while streaming is a 409", async () => {
  const model = scripted(t, [fauxAssistantMessage("slow ".repeat(60))], { tokensPerSecond: 150 });
  const reader = eventReader(await chat(t, { message: "long", model: model.id }));
  const start = await reader.until((e) => e.type === "start");
  const response = await chat(t, { sessionId: start.sessionId, message: "interrupt" });
  expect(response.status).toBe(409);
  expect(((await response.json()) as { message: string }).message).toContain("streamingBehavior");
  expect((await reader.rest()).at(-1)?.type).toBe("done");
  model.dispose();
});
