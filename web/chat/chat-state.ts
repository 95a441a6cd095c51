/**
 * What one chat session shows, and how each event of the chat stream changes it: `applyChatEvent` is a
 * pure function of the view and one `ChatStreamEvent` (schemas/chat-records.ts), so every event's effect
 * is tested without a browser (tests/web/chat-state.test.ts). The hook (use-chat.ts) only wires it to
 * the stream and to the screen.
 */
import type {
  ChatQuestion,
  ChatStreamEvent,
  PlanState,
  SessionRef,
  ToolPart,
  UiMessage,
} from "../../schemas/chat.ts";
import {
  appendText,
  normalizeMessages,
  normalizePart,
  questionFrom,
  thinkingPart,
  updateMessage,
  upsertPart,
} from "./messages.ts";

export interface Queue {
  steering: string[];
  followUp: string[];
}

/** One session as the chat view shows it. */
export interface ChatView {
  ref: SessionRef;
  messages: UiMessage[];
  plan?: PlanState;
  question?: ChatQuestion;
  queue: Queue;
  notice?: string;
  error?: string;
  /** The reply streaming into this view (set by `start`), which later events write to. */
  replyId?: string;
}

export const EMPTY_QUEUE: Queue = { steering: [], followUp: [] };
export const EMPTY_VIEW: ChatView = { ref: {}, messages: [], queue: EMPTY_QUEUE };

/** The view after one stream event. Returns a new view; messages other than the reply keep identity. */
export function applyChatEvent(view: ChatView, event: ChatStreamEvent): ChatView {
  const id = view.replyId;
  const reply = (update: (message: UiMessage) => UiMessage): ChatView =>
    id ? { ...view, messages: updateMessage(view.messages, id, update) } : view;
  switch (event.type) {
    case "start": {
      const message: UiMessage = { id: event.id, role: "assistant", parts: [] };
      return {
        ...view,
        replyId: event.id,
        ref: { sessionId: event.sessionId, sessionFile: event.sessionFile },
        messages: [...view.messages, message],
        notice: event.sessionReset
          ? "The earlier session could not be opened: this is a new one."
          : view.notice,
      };
    }
    case "delta":
      return reply((m) => appendText(m, event.text));
    case "thinking":
      return id ? reply((m) => upsertPart(m, thinkingPart(id, event.text, "input-streaming"))) : view;
    case "tool":
      return withQuestion(
        reply((m) => upsertPart(m, normalizePart(event.part))),
        event.part,
      );
    case "plan":
      return { ...view, plan: event.state };
    case "queue":
      return { ...view, queue: { steering: event.steering, followUp: event.followUp } };
    case "compaction":
      return {
        ...view,
        notice:
          event.phase === "start"
            ? `Compacting the conversation (${event.reason})…`
            : event.aborted
              ? "Compaction was stopped."
              : "Conversation compacted.",
      };
    case "retry":
      return {
        ...view,
        notice:
          event.phase === "start"
            ? `Retrying (${event.attempt}/${event.maxAttempts}): ${event.errorMessage}`
            : event.success
              ? "Retry succeeded."
              : `Retry failed: ${event.finalError ?? ""}`,
      };
    case "done": {
      const doneId = id ?? event.message.id;
      return {
        ...view,
        messages: updateMessage(view.messages, doneId, (streamed) => {
          // The final message replaces the streamed one (keeping its id); thinking is settled.
          const final = normalizeMessages([event.message])[0] ?? streamed;
          return {
            ...final,
            id: streamed.id,
            parts: final.parts.map((p) =>
              p.type === "tool-Thinking" ? { ...p, state: "output-available" as const } : p,
            ),
          };
        }),
        ref: { sessionId: event.sessionId, sessionFile: event.sessionFile ?? view.ref.sessionFile },
        queue: EMPTY_QUEUE,
      };
    }
    case "error":
      // Shown in the reply it belongs to (with Retry there), else below the transcript.
      return id
        ? reply((m) => upsertPart(m, { type: "error", message: event.message }))
        : { ...view, error: event.message };
    case "state":
      // Lifecycle names (agent_start, turn_end, ...): nothing on screen depends on them.
      return view;
  }
}

/** A questionnaire call waiting for its answer opens the question card; its result closes it. */
function withQuestion(view: ChatView, part: ToolPart): ChatView {
  const name = part.type;
  if (name !== "tool-Question" && name !== "tool-questionnaire") return view;
  if (part.state.startsWith("output")) return { ...view, question: undefined };
  if (name !== "tool-Question") return view;
  const question = part.question ?? questionFrom(part.input, part.toolCallId);
  return question?.prompt ? { ...view, question } : view;
}
