/**
 * One message to an agent or a fleet over plain HTTP (`POST /v1/chat/messages`, an Atrium extension):
 * the WebSocket's conversation, run to its end and answered as one JSON reply. It opens a session on
 * the target (or continues `session_id`), runs the message through the target's coordination pattern
 * exactly as the socket does (stored, memory recalled), and ends with the reply or the refusal the
 * socket would send as a frame, as an HTTP error. The client going away aborts the model calls.
 */
import type { ChatMessageReply, ChatMessageRequest } from "../../../schemas/agents.ts";

type Reply = typeof ChatMessageReply.static;

import { AppError } from "../../http/errors.ts";
import type { SseFrame } from "../../http/sse.ts";
import { AgentChatError, type Frame } from "../runtime/frames.ts";
import type { AgentChatService, AgentReply } from "./chat.ts";

/** The HTTP answer of a refusal the socket closes with (4404 → 404, ...) or sends as an error frame. */
function httpError(error: { code: string; message: string; closeCode?: number }): AppError {
  const code = { code: error.code };
  if (error.closeCode === 4404) return new AppError("not_found", error.message, code);
  if (error.closeCode === 4400) return new AppError("invalid", error.message, { ...code, status: 422 });
  if (error.code === "model_error") return new AppError("unavailable", error.message, code);
  return new AppError("conflict", error.message, code);
}

/** Opens the session the message goes to: a refusal here is the HTTP error, before any stream starts. */
async function open(chat: AgentChatService, owner: string, request: typeof ChatMessageRequest.static) {
  try {
    const { session } = await chat.connect(owner, {
      session_id: request.session_id,
      target_id: request.target_id,
      target_type: request.target_type,
    });
    return session;
  } catch (error) {
    if (error instanceof AgentChatError) throw httpError(error);
    throw error;
  }
}

function replyOf(sessionId: string, reply: AgentReply): Reply {
  const { agents, notices } = reply.metadata;
  return {
    session_id: sessionId,
    message_id: reply.message_id,
    content: reply.content,
    agents,
    ...(notices ? { notices } : {}),
    timestamp: reply.timestamp,
  };
}

export async function askOnce(
  chat: AgentChatService,
  owner: string,
  request: typeof ChatMessageRequest.static,
  signal: AbortSignal,
): Promise<Reply> {
  const session = await open(chat, owner, request);
  const frames: Frame[] = [];
  try {
    const reply = await chat.message(
      owner,
      session.id,
      { content: request.content, context: { ...request.context, stream: false } },
      (frame) => frames.push(frame),
      signal,
    );
    if (reply) return replyOf(session.id, reply);
    const failed = frames.find((f) => f.type === "error");
    throw httpError({
      code: String(failed?.code ?? "no_reply"),
      message: String(failed?.message ?? "No reply"),
    });
  } catch (error) {
    if (error instanceof AgentChatError) throw httpError(error);
    throw error;
  }
}

/**
 * The same message as a stream (`Accept: text/event-stream`): the socket's frames as they come, each as
 * `event: <type>` (`stream` chunks with the speaking member in `metadata`, `tool_call`, `tool_result`,
 * `notice`, `error`), then `event: reply` with the JSON reply. So a fleet's members' contributions reach
 * a plain HTTP client while the fleet works (the OpenAI-compatible endpoint streams them).
 */
export async function askStream(
  chat: AgentChatService,
  owner: string,
  request: typeof ChatMessageRequest.static,
): Promise<(signal: AbortSignal) => AsyncGenerator<SseFrame>> {
  const session = await open(chat, owner, request);
  return async function* frames(signal) {
    const queue: Frame[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    let failure: unknown;
    let reply: AgentReply | undefined;
    const send = (frame: Frame) => {
      queue.push(frame);
      wake?.();
    };
    const content = { content: request.content, context: { ...request.context, stream: true } };
    chat
      .message(owner, session.id, content, send, signal)
      .then((r) => {
        reply = r;
      })
      .catch((error) => {
        failure = error;
      })
      .finally(() => {
        ended = true;
        wake?.();
      });
    for (;;) {
      for (let frame = queue.shift(); frame; frame = queue.shift())
        // The socket's end-of-reply marker: the `reply` event says it with the answer.
        if (!(frame.type === "stream" && frame.is_complete)) yield { event: frame.type, data: frame };
      if (ended) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
    if (failure instanceof AgentChatError)
      yield { event: "error", data: { type: "error", code: failure.code, message: failure.message } };
    else if (failure) throw failure;
    else if (reply) yield { event: "reply", data: { type: "reply", ...replyOf(session.id, reply) } };
  };
}
