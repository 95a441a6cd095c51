/** Plan mode (todos, execute with [DONE:n], refine, persistence across eviction), harness mode, and questions. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { chat, scripted } from "../helpers/chat.ts";
import { type Event, eventReader, lines } from "../helpers/streams.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const toolUse = { stopReason: "toolUse" as const };

test("plan → execute with todos, progress and completion; the plan survives eviction; refine re-plans", async () => {
  const model = scripted(t, [
    // Plan mode is read-only: a write is refused with a tool error.
    fauxAssistantMessage([fauxToolCall("write", { path: "plan.txt", content: "x" }, { id: "w0" })], toolUse),
    fauxAssistantMessage(
      "I looked around.\n\nPlan:\n1. Create the notes file\n2. Write the summary\n3. Review it",
    ),
  ]);
  const planned = await lines(await chat(t, { message: "Plan the notes", mode: "plan", model: model.id }));
  const refused = planned.find((e) => e.type === "tool" && e.part.output !== undefined);
  expect(refused?.part.isError).toBe(true);
  expect(JSON.stringify(refused?.part.output)).toContain("not allowed in plan mode");
  expect(existsSync(`${t.dataDir}/workspaces/local/plan.txt`)).toBe(false);
  const plan = planned.filter((e) => e.type === "plan").at(-1);
  expect(plan).toMatchObject({ mode: "plan", executing: false, completed: 0, total: 3 });
  expect(plan?.state).toMatchObject({ pendingDecision: true });
  expect(plan?.state.todos).toEqual([
    { step: 1, text: "Create the notes file", completed: false },
    { step: 2, text: "Write the summary", completed: false },
    { step: 3, text: "Review it", completed: false },
  ]);
  expect(planned.at(-1)?.type).toBe("done");
  const sessionId = planned[0]?.sessionId;

  // Evicted between planning and executing: the plan comes back from the session file.
  t.family("chat").runtime.host.sweep(Date.now() + 24 * 3600_000);

  model.append([
    fauxAssistantMessage(
      [
        fauxText("Creating it. [DONE:1]"),
        fauxToolCall("write", { path: "notes.md", content: "# Notes\n" }, { id: "w1" }),
      ],
      toolUse,
    ),
    fauxAssistantMessage("Summary written [DONE:2], reviewed [DONE:3]. All done."),
  ]);
  const executed = await lines(await chat(t, { sessionId, planAction: "execute", model: model.id }));
  const progress = executed.filter((e) => e.type === "plan");
  expect(progress[0]).toMatchObject({ mode: "agent", executing: true, completed: 0, total: 3 });
  expect(progress.map((p) => p.completed)).toEqual([0, 1, 3, 3]);
  expect(progress.at(-1)).toMatchObject({ executing: false, completed: 3, message: "Plan complete." });
  expect(existsSync(`${t.dataDir}/workspaces/local/notes.md`)).toBe(true);
  expect(executed.at(-1)?.type).toBe("done");

  const hydrated = await t.json<Event>(`/api/chat/session?sessionId=${sessionId}`);
  expect(hydrated.body.session.plan).toMatchObject({ completed: 3, total: 3, executing: false });

  model.append([fauxAssistantMessage("Shorter.\n\nPlan:\n1. Write everything\n2. Check it")]);
  const refined = await lines(
    await chat(t, { sessionId, planAction: "refine", message: "two steps please", model: model.id }),
  );
  expect(refined.filter((e) => e.type === "plan").at(-1)).toMatchObject({
    mode: "plan",
    total: 2,
    completed: 0,
  });
  model.dispose();
});

test("execute without a plan is a 400", async () => {
  const response = await chat(t, { planAction: "execute" });
  expect(response.status).toBe(400);
});

test("harness mode refuses tools outside its allow-list with a clear tool error", async () => {
  const model = scripted(t, [
    fauxAssistantMessage(
      [
        fauxToolCall("edit", { path: "a.txt", edits: [{ oldText: "a", newText: "b" }] }, { id: "e1" }),
        fauxToolCall("write", { path: "harness.txt", content: "ok" }, { id: "w1" }),
      ],
      toolUse,
    ),
    fauxAssistantMessage("done"),
  ]);
  const events = await lines(await chat(t, { message: "go", mode: "harness", model: model.id }));
  const results = Object.fromEntries(
    events
      .filter((e) => e.type === "tool" && e.part.output !== undefined)
      .map((e) => [e.part.toolCallId, e.part]),
  );
  expect(results.e1?.isError).toBe(true);
  expect(JSON.stringify(results.e1?.output)).toContain("not allowed in harness mode");
  expect(results.w1?.isError).toBe(false);
  expect(await Bun.file(`${t.dataDir}/workspaces/local/harness.txt`).text()).toBe("ok");
  model.dispose();
});

test("a question round trip: the turn pauses, malformed answers are 400, the answer resumes it", async () => {
  const options = [
    { id: "red", label: "Red" },
    { id: "blue", label: "Blue" },
  ];
  const model = scripted(t, [
    fauxAssistantMessage(
      [
        fauxToolCall(
          "questionnaire",
          { id: "colour", question: "Which colour?", kind: "single", options },
          { id: "q1" },
        ),
      ],
      toolUse,
    ),
    fauxAssistantMessage(
      [fauxToolCall("questionnaire", { question: "Anything else?", kind: "text" }, { id: "q2" })],
      toolUse,
    ),
    fauxAssistantMessage("Thanks, painting it red."),
  ]);
  const reader = eventReader(await chat(t, { message: "paint", model: model.id }));
  const start = await reader.until((e) => e.type === "start");
  // A pending question is the questionnaire's tool part again (tool-Question), with the question's ids.
  const asked = await reader.until((e) => e.type === "tool" && e.part.awaitingAnswer);
  expect(asked.part).toMatchObject({
    type: "tool-Question",
    toolCallId: "q1",
    state: "input-available",
    input: {
      questions: [
        {
          id: "colour",
          prompt: "Which colour?",
          options: [
            { value: "red", label: "Red" },
            { value: "blue", label: "Blue" },
          ],
        },
      ],
    },
    question: { toolCallId: "q1", questionId: "colour", kind: "single", prompt: "Which colour?", options },
  });
  expect(
    reader.seen.some(
      (e) => e.type === "tool" && e.part.state === "input-available" && e.part.toolCallId === "q1",
    ),
  ).toBe(true);
  const pending = await t.json<Event>(`/api/chat/session?sessionId=${start.sessionId}`);
  expect(pending.body.session.pendingQuestions).toHaveLength(1);

  const answer = (toolCallId: string, a: unknown) =>
    t.json("/api/chat/question", postJson({ sessionId: start.sessionId, toolCallId, answer: a }));
  expect((await answer("q1", { kind: "multi", questionId: "colour", selectedIds: ["red"] })).status).toBe(
    400,
  );
  expect((await answer("q1", { kind: "single", questionId: "colour", selectedIds: ["green"] })).status).toBe(
    400,
  );
  expect(
    (await answer("q1", { kind: "single", questionId: "colour", selectedIds: ["red", "blue"] })).status,
  ).toBe(400);
  expect(await answer("nope", { kind: "skip" })).toMatchObject({ status: 404, body: { ok: false } });
  const ok = await answer("q1", { kind: "single", questionId: "colour", selectedIds: ["red"] });
  expect(ok).toMatchObject({
    status: 200,
    body: { ok: true, message: "Answer recorded", mode: "agent" },
  });
  // Optional fields are left out, never null (the reference client refuses null).
  expect(ok.body).not.toHaveProperty("planAction");

  const second = await reader.until((e) => e.type === "tool" && e.part.awaitingAnswer);
  expect(second.part.question).toMatchObject({ toolCallId: "q2", kind: "text" });
  expect((await answer("q2", { kind: "text", text: "" })).status).toBe(400);
  expect((await answer("q2", { kind: "text", text: "a glossy finish" })).status).toBe(200);

  const events = await reader.rest();
  const results = events
    .filter((e) => e.type === "tool" && e.part.output !== undefined)
    .map((e) => JSON.stringify(e.part.output));
  expect(results[0]).toContain("The user selected: Red (red)");
  expect(results[1]).toContain("The user answered: a glossy finish");
  expect(events.at(-1)?.type).toBe("done");
  model.dispose();
});

test("skipping a question resumes the turn too", async () => {
  const model = scripted(t, [
    fauxAssistantMessage(
      [
        fauxToolCall(
          "questionnaire",
          { question: "Pick", kind: "multi", options: [{ id: "a", label: "A" }] },
          { id: "q9" },
        ),
      ],
      toolUse,
    ),
    fauxAssistantMessage("ok"),
  ]);
  const reader = eventReader(await chat(t, { message: "ask me", model: model.id }));
  const start = await reader.until((e) => e.type === "start");
  await reader.until((e) => e.type === "tool" && e.part.awaitingAnswer);
  const skipped = await t.json(
    "/api/chat/question",
    postJson({ sessionId: start.sessionId, toolCallId: "q9", answer: { kind: "skip" } }),
  );
  expect(skipped).toMatchObject({ status: 200, body: { ok: true, message: "Question skipped" } });
  const events = await reader.rest();
  expect(
    JSON.stringify(events.find((e) => e.type === "tool" && e.part.output !== undefined)?.part.output),
  ).toContain("skipped");
  expect(events.at(-1)?.type).toBe("done");
  model.dispose();
});
