/**
 * The chat stream's events (spec "Chat stream events") and the mapping from pi's AgentSessionEvents:
 * text delta → `delta`, thinking delta → `thinking` (the accumulated thinking text, as the reference client sends
 * it), tool execution → `tool` (a UI tool part: `input-available` when it starts, `output-available` or
 * `output-error` with its output when it ends), queue update → `queue`, compaction start/end →
 * `compaction`, auto-retry → `retry`. `start`, `plan`, `done` and `error` are made by the run itself.
 * `messageId` is the run's id (the id of `done.message`) while a run streams.
 */
import type { AgentSessionEvent } from "@mariozechner/pi-coding-agent";
import type { ChatStreamEvent, PlanState } from "../../../schemas/chat-records.ts";
import { toolCallPart, toolResultPart } from "./ui-messages.ts";

/** One NDJSON line of the chat stream: the schema's union (schemas/chat-records.ts). */
export type ChatEvent = ChatStreamEvent;

export function planEvent(state: PlanState): ChatEvent {
  return {
    type: "plan",
    mode: state.mode,
    executing: state.executing,
    completed: state.completed,
    total: state.total,
    message: state.message,
    state: structuredClone(state),
  };
}

/**
 * Stateful per live session: message ids, the thinking text accumulated so far, and each running tool's
 * arguments (pi's end event carries none). `runId` names the run streaming now, if any.
 */
export class ChatEventMapper {
  private messageId: string | undefined;
  private thinking = "";
  private readonly toolArgs = new Map<string, unknown>();

  constructor(private readonly runId: () => string | undefined = () => undefined) {}

  map(event: AgentSessionEvent): ChatEvent | undefined {
    switch (event.type) {
      case "message_start":
        if (event.message.role === "assistant") {
          this.messageId = this.runId() ?? crypto.randomUUID();
          this.thinking = "";
        }
        return undefined;
      case "message_update": {
        const e = event.assistantMessageEvent;
        if (e.type === "text_delta") return { type: "delta", text: e.delta, messageId: this.messageId };
        if (e.type === "thinking_delta") {
          this.thinking += e.delta;
          return { type: "thinking", text: this.thinking, messageId: this.messageId };
        }
        return undefined;
      }
      case "tool_execution_start":
        this.toolArgs.set(event.toolCallId, event.args);
        return {
          type: "tool",
          part: toolCallPart(event.toolCallId, event.toolName, event.args),
          messageId: this.messageId,
        };
      case "tool_execution_end": {
        const args = this.toolArgs.get(event.toolCallId);
        this.toolArgs.delete(event.toolCallId);
        return {
          type: "tool",
          part: toolResultPart(event.toolCallId, event.toolName, args, event.result, event.isError),
          messageId: this.messageId,
        };
      }
      case "queue_update":
        return { type: "queue", steering: [...event.steering], followUp: [...event.followUp] };
      case "compaction_start":
        return { type: "compaction", phase: "start", reason: event.reason };
      case "compaction_end":
        return {
          type: "compaction",
          phase: "end",
          reason: event.reason,
          aborted: event.aborted,
          willRetry: event.willRetry,
          errorMessage: event.errorMessage,
        };
      case "auto_retry_start":
        return {
          type: "retry",
          phase: "start",
          attempt: event.attempt,
          maxAttempts: event.maxAttempts,
          delayMs: event.delayMs,
          errorMessage: event.errorMessage,
        };
      case "auto_retry_end":
        return {
          type: "retry",
          phase: "end",
          attempt: event.attempt,
          success: event.success,
          finalError: event.finalError,
        };
      default:
        return undefined;
    }
  }
}
