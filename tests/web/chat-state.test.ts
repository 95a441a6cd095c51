/**
 * The chat view's reducer (web/chat/chat-state.ts) over every member of the chat stream's event union
 * (schemas/chat-records.ts): a reply opens with `start`, grows with deltas, thinking and tool parts, and
 * is replaced by `done`'s final message; plan, queue, compaction and retry events change what the view
 * says; an error lands in the reply or, before one exists, below the transcript; a questionnaire call
 * opens the question card and its result closes it. Only the reply's message changes identity.
 */
import { describe, expect, test } from "bun:test";
import type { ChatStreamEvent, PlanState, ToolPart, UiMessage } from "../../schemas/chat.ts";
import { applyChatEvent, type ChatView, EMPTY_VIEW } from "../../web/chat/chat-state.ts";

const user: UiMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "hello" }] };
const start: ChatStreamEvent = {
  type: "start",
  id: "a1",
  runId: "run1",
  sessionId: "s1",
  sessionFile: "f.jsonl",
};

const run = (events: ChatStreamEvent[], from: ChatView = { ...EMPTY_VIEW, messages: [user] }) =>
  events.reduce(applyChatEvent, from);
const reply = (view: ChatView) => view.messages.find((m) => m.id === view.replyId);

describe("a reply", () => {
  test("start adds an empty assistant message, names the session, and later events write to it", () => {
    const view = run([start]);
    expect(view.replyId).toBe("a1");
    expect(view.ref).toEqual({ sessionId: "s1", sessionFile: "f.jsonl" });
    expect(view.messages).toEqual([user, { id: "a1", role: "assistant", parts: [] }]);
    expect(view.notice).toBeUndefined();
    expect(run([{ ...start, sessionReset: true }]).notice).toContain("could not be opened");
  });

  test("deltas grow one text part; thinking and tools go before the text; the user's message keeps identity", () => {
    const tool: ToolPart = {
      type: "tool-Bash",
      toolCallId: "t1",
      state: "input-available",
      input: { command: "ls" },
    };
    const view = run([
      start,
      { type: "delta", text: "Hel" },
      { type: "thinking", text: "hmm" },
      { type: "delta", text: "lo" },
      { type: "tool", part: tool },
      { type: "tool", part: { ...tool, state: "output-available", output: "a.txt" } },
    ]);
    expect(view.messages[0]).toBe(user);
    expect(reply(view)?.parts).toEqual([
      {
        type: "tool-Thinking",
        toolCallId: "a1-thinking-0",
        state: "input-streaming",
        input: { thought: "hmm" },
        output: "hmm",
      },
      { ...tool, state: "output-available", output: "a.txt" },
      { type: "text", text: "Hello" },
    ]);
  });

  test("done replaces the streamed reply by the final message under the streamed id, thinking settled", () => {
    const final: UiMessage = {
      id: "server-id",
      role: "assistant",
      parts: [
        { type: "tool-Thinking", toolCallId: "x", state: "input-streaming", input: { thought: "t" } },
        { type: "text", text: "Hello there" },
      ],
    };
    const view = run([
      start,
      { type: "delta", text: "Hel" },
      { type: "queue", steering: [], followUp: ["next"] },
      { type: "done", runId: "run1", message: final, sessionId: "s1" },
    ]);
    expect(view.messages).toHaveLength(2);
    expect(reply(view)).toEqual({
      id: "a1",
      role: "assistant",
      parts: [
        { type: "tool-Thinking", toolCallId: "x", state: "output-available", input: { thought: "t" } },
        { type: "text", text: "Hello there" },
      ],
    });
    // The session file named at start survives a done that leaves it out; the queue is emptied.
    expect(view.ref).toEqual({ sessionId: "s1", sessionFile: "f.jsonl" });
    expect(view.queue).toEqual({ steering: [], followUp: [] });
  });

  test("events before start change no message (a queued follow-up's stream has none)", () => {
    const before = { ...EMPTY_VIEW, messages: [user] };
    const view = run(
      [
        { type: "delta", text: "x" },
        { type: "thinking", text: "y" },
      ],
      before,
    );
    expect(view.messages).toEqual([user]);
  });
});

describe("errors", () => {
  test("an error in a reply is a part of that reply", () => {
    const view = run([
      start,
      { type: "delta", text: "partial" },
      { type: "error", message: "model exploded" },
    ]);
    expect(reply(view)?.parts).toEqual([
      { type: "text", text: "partial" },
      { type: "error", message: "model exploded" },
    ]);
    expect(view.error).toBeUndefined();
  });

  test("an error before any reply is shown below the transcript", () => {
    const view = run([{ type: "error", message: "no model configured" }]);
    expect(view.error).toBe("no model configured");
    expect(view.messages).toEqual([user]);
  });
});

describe("what the view says", () => {
  const plan: PlanState = {
    mode: "plan",
    executing: false,
    pendingDecision: true,
    completed: 0,
    total: 1,
    todos: [{ step: 1, text: "read", completed: false }],
  };

  test("plan, queue, and lifecycle states", () => {
    const view = run([
      start,
      { type: "plan", mode: "plan", executing: false, completed: 0, total: 1, state: plan },
      { type: "queue", steering: ["now"], followUp: ["later"] },
      { type: "state", state: { name: "turn_start" } },
    ]);
    expect(view.plan).toEqual(plan);
    expect(view.queue).toEqual({ steering: ["now"], followUp: ["later"] });
    expect(run([{ type: "state", state: { name: "agent_end" } }], view)).toEqual(view);
  });

  test("compaction and retry notices, each phase", () => {
    const notice = (event: ChatStreamEvent) => run([event]).notice;
    expect(notice({ type: "compaction", phase: "start", reason: "threshold" })).toBe(
      "Compacting the conversation (threshold)…",
    );
    const end = { type: "compaction", phase: "end", reason: "threshold", willRetry: false } as const;
    expect(notice({ ...end, aborted: false })).toBe("Conversation compacted.");
    expect(notice({ ...end, aborted: true })).toBe("Compaction was stopped.");
    expect(
      notice({
        type: "retry",
        phase: "start",
        attempt: 1,
        maxAttempts: 3,
        delayMs: 10,
        errorMessage: "overloaded",
      }),
    ).toBe("Retrying (1/3): overloaded");
    expect(notice({ type: "retry", phase: "end", success: true, attempt: 2 })).toBe("Retry succeeded.");
    expect(notice({ type: "retry", phase: "end", success: false, attempt: 3, finalError: "gone" })).toBe(
      "Retry failed: gone",
    );
  });
});

describe("questions", () => {
  const asked: ToolPart = {
    type: "tool-Question",
    toolCallId: "q1",
    state: "input-available",
    input: { questions: [{ id: "colour", prompt: "Which colour?", options: [{ id: "r", label: "Red" }] }] },
  };

  test("a waiting questionnaire call opens the card (from its input), and its result closes it", () => {
    const open = run([start, { type: "tool", part: asked }]);
    expect(open.question).toEqual({
      toolCallId: "q1",
      questionId: "colour",
      kind: "single",
      prompt: "Which colour?",
      options: [{ id: "r", label: "Red" }],
    });
    const closed = run(
      [{ type: "tool", part: { ...asked, state: "output-available", output: "Red" } }],
      open,
    );
    expect(closed.question).toBeUndefined();
  });

  test("the server's own question on a waiting call is used as sent", () => {
    const question = {
      toolCallId: "q1",
      questionId: "id-9",
      kind: "text" as const,
      prompt: "Why?",
      options: [],
    };
    const view = run([start, { type: "tool", part: { ...asked, awaitingAnswer: true, question } }]);
    expect(view.question).toEqual(question);
  });

  test("other tools leave the question alone", () => {
    const open = run([start, { type: "tool", part: asked }]);
    const bash: ToolPart = { type: "tool-Bash", toolCallId: "b", state: "output-available", output: "" };
    expect(run([{ type: "tool", part: bash }], open).question).toEqual(open.question);
  });
});
