/**
 * The chat family's routes as the terminal uses them: the NDJSON turn stream, answering a question,
 * aborting, sessions (list, resume), models. Thin: one function a route.
 */

import { ndjson } from "../../common/streams.ts";
import type {
  ChatQuestion,
  ChatRequest,
  ChatStreamEvent,
  Hydrated,
  Models,
  QuestionAnswer,
  SessionList,
} from "../../schemas/chat.ts";
import type { Api } from "../api.ts";
import { ApiError } from "../api.ts";

/** The answer half of `POST /api/chat/question`. */
export type Answer = QuestionAnswer["answer"];

/** One NDJSON line that is an event (the server sends only those; anything else is skipped). */
function isChatEvent(value: unknown): value is ChatStreamEvent {
  return (
    typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"
  );
}

export const chatClient = (api: Api) => ({
  /** Streams one chat request's events to `onEvent`; the last is `done` or `error`. */
  async send(
    request: ChatRequest,
    onEvent: (event: ChatStreamEvent) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const response = await api.stream("/api/chat", request, { accept: "application/x-ndjson" }, signal);
    if (!response.body) throw new ApiError("empty_stream", "the server answered without a stream");
    const lines = ndjson(response.body);
    for (;;) {
      let next: IteratorResult<unknown>;
      try {
        next = await lines.next();
      } catch (error) {
        if (signal?.aborted) return;
        throw new ApiError("connection_lost", `the chat stream broke: ${(error as Error).message}`);
      }
      if (next.done) return;
      if (isChatEvent(next.value)) onEvent(next.value);
    }
  },
  answer: (sessionId: string, question: ChatQuestion, answer: Answer) =>
    api.send<{ ok: boolean; message: string }>("POST", "/api/chat/question", {
      sessionId,
      toolCallId: question.toolCallId,
      answer: { questionId: question.questionId, ...answer },
    }),
  abort: (sessionId: string) => api.send<{ aborted: boolean }>("POST", "/api/chat/abort", { sessionId }),
  sessions: () => api.get<SessionList>("/api/chat/sessions?limit=20"),
  resume: (sessionId: string) => api.send<Hydrated>("POST", "/api/chat/resume", { sessionId }),
  models: () => api.get<Models>("/api/chat/models"),
});

export type ChatClient = ReturnType<typeof chatClient>;

/**
 * An answer typed at the prompt: for a choice, option numbers or labels (`2`, `red`, `1,3`); for a
 * text question, the text; `/skip` (or nothing) skips. Undefined when it fits none of the options.
 */
export function parseAnswer(question: ChatQuestion, typed: string): Answer | undefined {
  const text = typed.trim();
  if (!text || text === "/skip") return { kind: "skip" };
  if (question.kind === "text") return { kind: "text", text };
  const picks = question.kind === "multi" ? text.split(/[,\s]+/).filter(Boolean) : [text];
  const ids: string[] = [];
  for (const pick of picks) {
    const n = Number(pick);
    const option = Number.isInteger(n)
      ? question.options[n - 1]
      : question.options.find((o) => o.id === pick || o.label.toLowerCase() === pick.toLowerCase());
    if (!option) return undefined;
    if (!ids.includes(option.id)) ids.push(option.id);
  }
  return { kind: question.kind, selectedIds: ids };
}
