/**
 * Reading a model's reply (pi-ai's AssistantMessage), the same way in every family: whether it failed,
 * and its text; and the reply of a call that failed before the model answered.
 */
import type { Api, AssistantMessage, Model } from "@mariozechner/pi-ai";

/** A reply that ended in an error or was aborted carries no answer. */
export function replyFailed(reply: AssistantMessage): boolean {
  return reply.stopReason === "error" || reply.stopReason === "aborted";
}

/** The reply's text parts, joined as they came (thinking and tool calls left out). */
export function replyText(reply: AssistantMessage): string {
  let text = "";
  for (const part of reply.content) if (part.type === "text") text += part.text;
  return text;
}

/** The reply's thinking parts, joined as they came. */
export function replyThinking(reply: AssistantMessage): string {
  let thinking = "";
  for (const part of reply.content) if (part.type === "thinking") thinking += part.thinking;
  return thinking;
}

/** The reply of a call that failed before the model answered (its server unreachable or refused). */
export function failedMessage(model: Model<Api>, errorMessage: string): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "error",
    errorMessage,
    timestamp: Date.now(),
  };
}
