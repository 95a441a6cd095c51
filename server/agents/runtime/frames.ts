/**
 * The frames of the WebSocket /v1/chat. Client frames are checked against the schemas of
 * schemas/agents.ts (`ClientMessageFrame`, `ClientEndFrame`), compiled once with Elysia's TypeBox, so
 * every limit they declare (content length, id lengths, the capability enum) holds on the socket as it
 * does on HTTP bodies. A frame that fails becomes an `error` frame (`invalid_frame`, or
 * `session_mismatch`) and the socket stays open; server frames and the refusal error live here too.
 */
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import type { ValueErrorIterator } from "@sinclair/typebox/errors";
import type { Static } from "elysia";
import {
  type AgentNoticeFrame,
  type AgentToolCallFrame,
  type AgentToolResultFrame,
  ClientEndFrame,
  ClientMessageFrame,
} from "../../../schemas/agents.ts";
import { issuesFrom } from "../../http/validation.ts";
import { isoNow } from "../../lib/clock.ts";

export type Frame = Record<string, unknown> & { type: string };
export type Send = (frame: Frame) => void;

/** A refusal on the socket: an `error` frame, and a close when `closeCode` is set. */
/** What an agent's reply does besides speaking: its MCP tool calls and why a listed server gave none. */
export type AgentCallEvent =
  | { type: "tool_call"; toolCallId: string; name: string; arguments: Record<string, unknown> }
  | { type: "tool_result"; toolCallId: string; name: string; content: string; isError: boolean }
  | { type: "notice"; message: string };

export class AgentChatError extends Error {
  override name = "AgentChatError";
  constructor(
    readonly code: string,
    message: string,
    readonly closeCode?: number,
  ) {
    super(message);
  }
}

export function errorFrame(code: string, message: string, extra: Record<string, unknown> = {}): Frame {
  return { type: "error", code, message, timestamp: isoNow(), ...extra };
}

/** An agent's MCP tool call, its result or a notice (agent-call.ts) as its frame (schemas/agents.ts). */
export function eventFrame(
  event: AgentCallEvent,
  messageId: string,
  metadata: Record<string, unknown>,
  timestamp: string,
): AgentToolCallFrame | AgentToolResultFrame | AgentNoticeFrame {
  const common = { message_id: messageId, metadata, timestamp };
  switch (event.type) {
    case "tool_call":
      return {
        type: "tool_call",
        tool_call_id: event.toolCallId,
        name: event.name,
        arguments: event.arguments,
        ...common,
      };
    case "tool_result":
      return {
        type: "tool_result",
        tool_call_id: event.toolCallId,
        name: event.name,
        content: event.content,
        is_error: event.isError,
        ...common,
      };
    case "notice":
      return { type: "notice", code: "mcp_server_unavailable", message: event.message, ...common };
  }
}

// Compiled with the first frame a socket reads, not as the server starts (about 10 ms of its start).
let compiled:
  | { message: TypeCheck<typeof ClientMessageFrame>; end: TypeCheck<typeof ClientEndFrame> }
  | undefined;
const checkers = () =>
  (compiled ??= {
    message: TypeCompiler.Compile(ClientMessageFrame),
    end: TypeCompiler.Compile(ClientEndFrame),
  });

export type MessageFrame = Static<typeof ClientMessageFrame>;
export type MessageContext = NonNullable<MessageFrame["context"]>;

/** What a client frame asks for, or the error frame that answers it. */
export type ClientFrame =
  | { kind: "message"; content: string; context?: MessageContext }
  | { kind: "end_session" }
  | { kind: "invalid"; error: Frame };

const invalid = (message: string, extra: Record<string, unknown> = {}): ClientFrame => ({
  kind: "invalid",
  error: errorFrame("invalid_frame", message, extra),
});

/** Reads one parsed frame of a socket bound to `sessionId`. */
export function readClientFrame(raw: unknown, sessionId: string): ClientFrame {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return invalid("A frame must be a JSON object with a type: message or end_session");
  const frame = raw as Record<string, unknown>;
  if (frame.session_id !== undefined && frame.session_id !== sessionId)
    return {
      kind: "invalid",
      error: errorFrame("session_mismatch", `This socket is bound to session ${sessionId}`),
    };
  const { message: messageFrame, end: endFrame } = checkers();
  if (frame.type === "end_session")
    return endFrame.Check(frame) ? { kind: "end_session" } : firstIssue(endFrame.Errors(frame));
  if (frame.type !== "message")
    return invalid(
      `Unknown frame type ${JSON.stringify(frame.type ?? null)}; expected message or end_session`,
    );
  if (!messageFrame.Check(frame)) return firstIssue(messageFrame.Errors(frame));
  return { kind: "message", content: frame.content, context: frame.context };
}

/**
 * The first problem only (a hostile frame can hold thousands), worded as before the schemas were
 * enforced where clients know the text: content and context keep their messages, the rest is `field: msg`.
 */
function firstIssue(errors: ValueErrorIterator): ClientFrame {
  const first = errors.First();
  const [issue] = issuesFrom("frame", first ? [first] : []);
  if (!issue) return invalid("The frame does not match its schema");
  const loc = issue.loc.slice(1);
  const field = loc.join(".");
  if (field === "content" && issue.type !== "string_too_long")
    return invalid("content must be a non-empty string", { loc });
  if (field === "context" && issue.type === "dict_type") return invalid("context must be an object", { loc });
  return invalid(`${field}: ${issue.msg}`, { loc });
}
