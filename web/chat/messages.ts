/**
 * The chat's UI messages and how stream events change them. Messages are the wire's `{id, role, parts}`;
 * parts are text, error, and tool-like parts (`tool-<Name>` with toolCallId/state/input/output; thinking
 * is `tool-Thinking`). Older shapes are folded in: `tool-call`/`tool-result` parts and pi's raw
 * `{role, content}` messages from a hydrated session. Every update returns a new array in which only the
 * changed message is a new object, so the transcript re-renders one message per delta.
 */
import type {
  ChatQuestion,
  ErrorPart,
  MessagePart as Part,
  TextPart,
  ToolPart,
  UiMessage,
} from "../../schemas/chat.ts";

export type { Part };

export const isText = (p: Part): p is TextPart => p.type === "text";
export const isError = (p: Part): p is ErrorPart => p.type === "error";
export const toolName = (p: Part) => p.type.replace(/^tool-/, "");

type Raw = Record<string, unknown>;

/** A wire tool part in either shape, as a `tool-<Name>` part. */
export function normalizePart(raw: Raw): Part {
  if (raw.type === "tool-call") {
    return {
      type: `tool-${String(raw.toolName ?? "tool")}`,
      toolCallId: raw.toolCallId as string,
      state: "input-available",
      input: raw.args,
    };
  }
  if (raw.type === "tool-result") {
    return {
      type: `tool-${String(raw.toolName ?? "tool")}`,
      toolCallId: raw.toolCallId as string,
      state: raw.isError ? "output-error" : "output-available",
      output: raw.result,
    };
  }
  return raw as Part;
}

function blockText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b: Raw) => b?.type === "text")
    .map((b: Raw) => String(b.text ?? ""))
    .join("\n");
}

/** A message from a hydrated session: a UI message as it is, or pi's `{role, content}` converted. */
export function normalizeMessages(raw: unknown[]): UiMessage[] {
  const out: UiMessage[] = [];
  raw.forEach((item, index) => {
    const m = item as Raw;
    const id = String(m.id ?? `m${index}`);
    if (Array.isArray(m.parts)) {
      out.push({ ...(m as unknown as UiMessage), parts: (m.parts as Raw[]).map(normalizePart) });
      return;
    }
    if (m.role === "user") {
      out.push({ id, role: "user", parts: [{ type: "text", text: blockText(m.content) }] });
    } else if (m.role === "assistant") {
      const parts: Part[] = [];
      for (const block of Array.isArray(m.content) ? (m.content as Raw[]) : []) {
        if (block.type === "text") parts.push({ type: "text", text: String(block.text ?? "") });
        else if (block.type === "thinking")
          parts.push(thinkingPart(id, String(block.thinking ?? ""), "output-available"));
        else if (block.type === "toolCall")
          parts.push({
            type: `tool-${String(block.name)}`,
            toolCallId: String(block.id),
            state: "input-available",
            input: block.arguments,
          });
      }
      if (m.stopReason === "error" && m.errorMessage)
        parts.push({ type: "error", message: String(m.errorMessage) });
      out.push({ id, role: "assistant", parts });
    } else if (m.role === "toolResult") {
      const owner = [...out]
        .reverse()
        .find((o) => o.parts.some((p) => (p as ToolPart).toolCallId === m.toolCallId));
      const part: ToolPart = {
        type: `tool-${String(m.toolName)}`,
        toolCallId: String(m.toolCallId),
        state: m.isError ? "output-error" : "output-available",
        output: blockText(m.content),
      };
      if (owner) Object.assign(owner, upsertPart(owner, part));
      else out.push({ id, role: "assistant", parts: [part] });
    }
  });
  return out;
}

export function thinkingPart(messageId: string, text: string, state: ToolPart["state"]): ToolPart {
  return {
    type: "tool-Thinking",
    toolCallId: `${messageId}-thinking-0`,
    state,
    input: { thought: text },
    output: text,
  };
}

/** The message with `part` merged into the part of the same type and toolCallId (or added before the text). */
export function upsertPart(message: UiMessage, part: Part): UiMessage {
  const id = (part as ToolPart).toolCallId;
  const name = toolName(part);
  const index = message.parts.findIndex(
    (p) => id !== undefined && (p as ToolPart).toolCallId === id && toolName(p) === name,
  );
  const parts = [...message.parts];
  if (index >= 0) parts[index] = { ...parts[index], ...part } as Part;
  else {
    const text = parts.findIndex(isText);
    if (text >= 0 && part.type !== "error") parts.splice(text, 0, part);
    else parts.push(part);
  }
  return { ...message, parts };
}

export function appendText(message: UiMessage, text: string): UiMessage {
  const parts = [...message.parts];
  const index = parts.findIndex(isText);
  if (index >= 0) parts[index] = { type: "text", text: (parts[index] as TextPart).text + text };
  else parts.push({ type: "text", text });
  return { ...message, parts };
}

/** Replaces the message with `id` by `update(old)`; other messages keep their identity. */
export function updateMessage(
  messages: UiMessage[],
  id: string,
  update: (m: UiMessage) => UiMessage,
): UiMessage[] {
  const index = messages.findIndex((m) => m.id === id);
  if (index < 0) return messages;
  const next = messages.slice();
  next[index] = update(messages[index] as UiMessage);
  return next;
}

/** The text a user wrote in a message (for titles, retry, export). */
export function messageText(message: UiMessage): string {
  return message.parts
    .filter(isText)
    .map((p) => p.text)
    .join("\n");
}

/** A question from the `state` event, or from a pending `tool-Question` part (`input.questions[0]`). */
export function questionFrom(raw: unknown, toolCallId?: string): ChatQuestion | undefined {
  const q = raw as Record<string, unknown> | undefined;
  if (!q) return undefined;
  const first = Array.isArray(q.questions) ? (q.questions[0] as Record<string, unknown>) : q;
  if (!first) return undefined;
  const options = Array.isArray(first.options)
    ? (first.options as Record<string, unknown>[]).map((o) => ({
        id: String(o.id ?? o.value),
        label: String(o.label ?? o.id ?? o.value),
      }))
    : [];
  const kind = (first.kind as ChatQuestion["kind"]) ?? (options.length > 0 ? "single" : "text");
  return {
    toolCallId: String(q.toolCallId ?? toolCallId ?? ""),
    questionId: String(first.questionId ?? first.id ?? ""),
    kind,
    prompt: String(first.prompt ?? first.question ?? first.label ?? ""),
    options,
  };
}
