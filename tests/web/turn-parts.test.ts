/**
 * The turns view's reducer (web/views/turns/parts.ts): streamed deltas grow one part instead of adding
 * many, earlier states are never changed (so only the live turn re-renders), and a committed turn's
 * history parts give the same display parts as its live events did.
 */
import { expect, test } from "bun:test";
import type { TurnStreamEvent } from "../../schemas/turn-stream.ts";
import type { TurnRecord } from "../../schemas/turns.ts";
import { applyEvent, initialLive, partsFromHistory } from "../../web/views/turns/parts.ts";

test("deltas of reasoning, code, output and text each grow one part; a final frame sets the whole text", () => {
  const events: TurnStreamEvent[] = [
    { type: "turn_status", phase: "preparation", status: "running", message: "starting a sandbox" },
    { type: "turn_start", runId: "run_1", sessionId: "s", delivery: "live" },
    { type: "reasoning", streamId: "r", step: 1, delta: "Let me ", text: "Let me ", final: false },
    { type: "reasoning", streamId: "r", step: 1, delta: "add.", text: "Let me add.", final: false },
    { type: "code", streamId: "c1", step: 1, code: "print(", isDelta: true, final: false },
    { type: "code", streamId: "c1", step: 1, code: "6*7)", isDelta: true, final: true },
    { type: "tool_call", toolCallId: "t1", toolName: "write_file", input: ["a.txt", "x"] },
    { type: "tool_result", toolCallId: "t1", toolName: "write_file", output: { size: 1 }, error: null },
    { type: "output", streamId: "o1", step: 1, output: "42\n", isDelta: false, final: true },
    { type: "text", streamId: "answer", delta: "It is ", text: "It is ", final: false, role: "assistant" },
    { type: "text", streamId: "answer", delta: "42.", text: "It is 42.", final: true, role: "assistant" },
    {
      type: "turn_finish",
      finishReason: "stop",
      status: "completed",
      checkpointVersion: 1,
      durationMs: 9,
      traceId: null,
    },
  ];
  const states = [initialLive()];
  for (const e of events) states.push(applyEvent(states.at(-1) as ReturnType<typeof initialLive>, e));
  const last = states.at(-1);
  expect(last?.status).toBe("completed");
  expect(last?.runId).toBe("run_1");
  expect(last?.parts.map((p) => p.kind)).toEqual(["reasoning", "code", "tool", "output", "text"]);
  expect(last?.parts[0]).toMatchObject({ text: "Let me add." });
  expect(last?.parts[1]).toMatchObject({ code: "print(6*7)" });
  expect(last?.parts[2]).toMatchObject({ name: "write_file", output: { size: 1 }, error: null });
  expect(last?.parts[4]).toMatchObject({ text: "It is 42." });
  // The state after the first code delta still holds only that delta.
  expect(states[5]?.parts.find((p) => p.kind === "code")).toMatchObject({ code: "print(" });
  expect(states[2]?.message).toBeUndefined();
  expect(states[1]?.message).toBe("starting a sandbox");
});

test("errors and cancellation end the live turn with their status", () => {
  const failed = applyEvent(initialLive(), {
    type: "turn_error",
    code: "x",
    message: "Session not found",
    durationMs: 1,
  });
  expect(failed).toMatchObject({ status: "failed", error: "Session not found" });
  // The sentence that says why, when the server sends one beside the contract's terse message.
  const explained = applyEvent(initialLive(), {
    type: "turn_error",
    code: "sandbox_start_timeout",
    message: "Turn is unavailable",
    durationMs: 22_602,
    detail: "The Python sandbox did not start: the machine is out of memory.",
  });
  expect(explained.error).toBe("The Python sandbox did not start: the machine is out of memory.");
  const cancelled = applyEvent(initialLive(), { type: "turn_cancelled", reason: "user", durationMs: 3 });
  expect(cancelled.status).toBe("cancelled");
});

test("history parts map to the same display parts", () => {
  const turn: TurnRecord = {
    runId: "run_1",
    status: "completed",
    input: { text: "hi", attachmentIds: [], skillSelections: [] },
    sessionId: "s",
    usage: null,
    error: null,
    durationMs: 5,
    createdAt: "2026-01-01T00:00:00Z",
    finishedAt: "2026-01-01T00:00:01Z",
    messages: [
      { role: "user", parts: [{ type: "text", text: "hi" }] },
      {
        role: "assistant",
        parts: [
          {
            type: "data-attachment",
            data: { attachmentId: "att_1", phase: "bound", filename: "a.csv", byteSize: 8 },
          },
          { type: "step-start" },
          { type: "reasoning", text: "thinking" },
          { type: "data-code", data: { step: 1, code: "print(1)" } },
          {
            type: "dynamic-tool",
            toolName: "create_artifact",
            toolCallId: "t1",
            state: "output-available",
            input: ["R"],
            output: { artifactId: "art_1" },
          },
          {
            type: "data-artifact",
            data: {
              artifactId: "art_1",
              artifactKind: "report",
              title: "R",
              mediaType: "text/markdown",
              byteSize: 4,
              checksumSha256: "0",
            },
          },
          { type: "data-output", data: { step: 1, output: "1\n" } },
          { type: "text", text: "done" },
          { type: "data-status", data: { phase: "execution", status: "completed", message: null } },
        ],
      },
    ],
  };
  expect(partsFromHistory(turn).map((p) => p.kind)).toEqual([
    "attachment",
    "reasoning",
    "code",
    "tool",
    "artifact",
    "output",
    "text",
  ]);
  expect(partsFromHistory(turn).find((p) => p.kind === "artifact")).toMatchObject({
    id: "art_1",
    title: "R",
  });
});
