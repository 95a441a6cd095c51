/**
 * pi's messages as UI messages, the shape chat clients render (`done.message`, and the messages of
 * resume and GET /api/chat/session): `{id, role, parts, createdAt}` with text parts, error parts, tool
 * parts (`tool-<Name>` with `toolCallId`, `state`, `input`, `output`) and thinking parts
 * (`tool-Thinking`, `toolCallId` `<messageId>-thinking-<i>`, `input: {thought}`). Tool names, inputs and
 * outputs are normalised the way the reference client renders them: `read` → `tool-Read`, a `path`
 * argument also as `file_path`, a shell result as `{output, stdout, exitCode}`.
 */
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { AssistantMessage, ToolResultMessage } from "@mariozechner/pi-ai";
import type { SessionEntry } from "@mariozechner/pi-coding-agent";
import type { MessagePart, ToolPart, UiMessage } from "../../../schemas/chat-records.ts";

export type { MessagePart, ToolPart, UiMessage };

const DISPLAY_NAMES: Record<string, string> = {
  read: "Read",
  write: "Write",
  edit: "Edit",
  bash: "Bash",
  questionnaire: "Question",
  question: "Question",
};

export function toolDisplayName(toolName: string): string {
  return DISPLAY_NAMES[toolName.toLowerCase()] ?? toolName;
}

/** The tool's arguments as renderers read them (a copy; the model's arguments are not changed). */
export function toolInput(toolName: string, args: unknown): Record<string, unknown> {
  const input: Record<string, unknown> = isRecord(args) ? { ...args } : {};
  if (typeof input.path === "string" && input.file_path === undefined) input.file_path = input.path;
  const name = toolDisplayName(toolName);
  if (name === "Edit" && Array.isArray(input.edits)) {
    const edits = input.edits.filter(isRecord);
    input.old_string = edits.map((e) => String(e.oldText ?? "")).join("\n");
    input.new_string = edits.map((e) => String(e.newText ?? "")).join("\n");
  }
  if (name === "Question" && typeof input.question === "string" && input.questions === undefined) {
    const options = Array.isArray(input.options) ? input.options.filter(isRecord) : [];
    input.questions = [
      {
        id: typeof input.id === "string" ? input.id : "q1",
        prompt: input.question,
        kind: input.kind,
        options: options.map((o) => ({ value: String(o.id), label: String(o.label) })),
      },
    ];
  }
  return input;
}

/** A tool result as renderers read it: `content` (or a shell's `output`) and the result's `details`. */
export function toolOutput(
  toolName: string,
  input: Record<string, unknown>,
  result: unknown,
  isError: boolean,
) {
  const record = isRecord(result) ? result : {};
  const blocks = Array.isArray(record.content) ? record.content.filter(isRecord) : [];
  const text = blocks
    .filter((b) => b.type === "text" && typeof b.text === "string")
    .map((b) => b.text as string)
    .join("\n");
  const details = isRecord(record.details) ? record.details : {};
  switch (toolDisplayName(toolName)) {
    case "Bash":
      return { output: text, stdout: text, exitCode: isError ? 1 : 0, details };
    case "Write":
      return { content: !isError && typeof input.content === "string" ? input.content : text, details };
    case "Edit":
      return {
        content: !isError && typeof input.new_string === "string" ? input.new_string : text,
        old_content: typeof input.old_string === "string" ? input.old_string : "",
        ...(typeof details.diff === "string" ? { diff: details.diff } : {}),
        details,
      };
    default:
      return { content: text, details };
  }
}

/** A tool call before it finished (started, or waiting for an answer). */
export function toolCallPart(toolCallId: string, toolName: string, args: unknown): ToolPart {
  return {
    type: `tool-${toolDisplayName(toolName)}`,
    toolCallId,
    state: "input-available",
    input: toolInput(toolName, args),
    toolName,
  };
}

/** A finished tool call with its result. */
export function toolResultPart(
  toolCallId: string,
  toolName: string,
  args: unknown,
  result: unknown,
  isError: boolean,
): ToolPart {
  const input = toolInput(toolName, args);
  return {
    type: `tool-${toolDisplayName(toolName)}`,
    toolCallId,
    state: isError ? "output-error" : "output-available",
    input,
    output: toolOutput(toolName, input, result, isError),
    toolName,
    isError,
  };
}

export function thinkingPart(messageId: string, index: number, thought: string, streaming = false): ToolPart {
  return {
    type: "tool-Thinking",
    toolCallId: `${messageId}-thinking-${index}`,
    state: streaming ? "input-streaming" : "output-available",
    input: { thought },
    output: thought,
  };
}

/** Builds one UI message from pi messages, calls first and their results folded into the call's part. */
class MessageBuilder {
  readonly parts: MessagePart[] = [];
  private thinking = 0;
  private readonly calls = new Map<string, { index: number; name: string; args: unknown }>();

  constructor(readonly id: string) {}

  assistant(message: AssistantMessage): void {
    for (const block of message.content) {
      if (block.type === "text") {
        if (block.text) this.parts.push({ type: "text", text: block.text });
      } else if (block.type === "thinking") {
        if (block.thinking) this.parts.push(thinkingPart(this.id, this.thinking++, block.thinking));
      } else if (block.type === "toolCall") {
        this.calls.set(block.id, { index: this.parts.length, name: block.name, args: block.arguments });
        this.parts.push(toolCallPart(block.id, block.name, block.arguments));
      }
    }
    if (message.stopReason === "error")
      this.parts.push({
        type: "error",
        title: "Model error",
        message: message.errorMessage ?? "The model failed",
      });
    else if (message.stopReason === "aborted")
      this.parts.push({
        type: "error",
        title: "Run aborted",
        message: message.errorMessage ?? "Run aborted",
      });
  }

  toolResult(message: ToolResultMessage): void {
    const call = this.calls.get(message.toolCallId);
    const part = toolResultPart(
      message.toolCallId,
      message.toolName,
      call?.args,
      { content: message.content, details: message.details },
      message.isError,
    );
    if (call) this.parts[call.index] = part;
    else this.parts.push(part);
  }

  /** Whether a result belongs here (its call is in this message). */
  hasCall(toolCallId: string): boolean {
    return this.calls.has(toolCallId);
  }

  message(createdAt: number | undefined): UiMessage {
    return {
      id: this.id,
      role: "assistant",
      parts: this.parts.length ? this.parts : [{ type: "text", text: "" }],
      ...(createdAt !== undefined ? { createdAt } : {}),
    };
  }
}

/** The assistant's reply of one run (every model call and tool result after its prompt) as one message. */
export function turnMessage(
  id: string,
  messages: readonly AgentMessage[],
  createdAt = Date.now(),
): UiMessage {
  const builder = new MessageBuilder(id);
  for (const message of messages) {
    if (!isRecord(message) || !("role" in message)) continue;
    if (message.role === "assistant") builder.assistant(message as AssistantMessage);
    else if (message.role === "toolResult") builder.toolResult(message as ToolResultMessage);
  }
  return builder.message(createdAt);
}

/**
 * A session's branch as UI messages: each user message, then one assistant message per reply (the model
 * calls and tool results up to the next user message), its id the reply's first entry id.
 */
export function sessionMessages(
  entries: readonly SessionEntry[],
  /** Server paths out of the error texts a client sees (the runtime stored them as they were). */
  scrub: (text: string) => string = (text) => text,
): UiMessage[] {
  const out: UiMessage[] = [];
  let reply: { builder: MessageBuilder; createdAt: number } | undefined;
  const close = () => {
    if (reply) out.push(reply.builder.message(reply.createdAt));
    reply = undefined;
  };
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    const message = entry.message as AgentMessage;
    if (!isRecord(message) || !("role" in message)) continue;
    if (message.role === "user") {
      close();
      out.push({
        id: entry.id,
        role: "user",
        parts: [{ type: "text", text: userText(message.content) }],
        createdAt: message.timestamp,
      });
    } else if (message.role === "assistant") {
      reply ??= { builder: new MessageBuilder(entry.id), createdAt: message.timestamp };
      reply.builder.assistant(message);
    } else if (message.role === "toolResult") {
      reply ??= { builder: new MessageBuilder(entry.id), createdAt: message.timestamp };
      reply.builder.toolResult(message);
    }
  }
  close();
  for (const message of out)
    for (const part of message.parts)
      if (part.type === "error") {
        const error = part as { message: string };
        error.message = scrub(error.message);
      }
  return out;
}

function userText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => isRecord(b) && b.type === "text" && typeof b.text === "string")
    .map((b) => (b as { text: string }).text)
    .join("\n");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
