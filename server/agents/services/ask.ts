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
import { AgentChatError, type Frame } from "../runtime/frames.ts";
import type { AgentChatService } from "./chat.ts";

/** The HTTP answer of a refusal the socket closes with (4404 → 404, ...) or sends as an error frame. */
function httpError(error: { code: string; message: string; closeCode?: number }): AppError {
  const code = { code: error.code };
  if (error.closeCode === 4404) return new AppError("not_found", error.message, code);
  if (error.closeCode === 4400) return new AppError("invalid", error.message, { ...code, status: 422 });
  if (error.code === "model_error") return new AppError("unavailable", error.message, code);
  return new AppError("conflict", error.message, code);
}

export async function askOnce(
  chat: AgentChatService,
  owner: string,
  request: typeof ChatMessageRequest.static,
  signal: AbortSignal,
): Promise<Reply> {
  const frames: Frame[] = [];
  try {
    const { session } = chat.connect(owner, {
      session_id: request.session_id,
      target_id: request.target_id,
      target_type: request.target_type,
    });
    await chat.message(
      owner,
      session.id,
      { content: request.content, context: { ...request.context, stream: false } },
      (frame) => frames.push(frame),
      signal,
    );
    const reply = frames.find((f) => f.type === "response");
    if (!reply) {
      const failed = frames.find((f) => f.type === "error");
      throw httpError({
        code: String(failed?.code ?? "no_reply"),
        message: String(failed?.message ?? "No reply"),
      });
    }
    const metadata = (reply.metadata ?? {}) as { agents?: Reply["agents"]; notices?: string[] };
    return {
      session_id: session.id,
      message_id: String(reply.message_id),
      content: String(reply.content),
      agents: metadata.agents ?? [],
      ...(metadata.notices ? { notices: metadata.notices } : {}),
      timestamp: String(reply.timestamp),
    };
  } catch (error) {
    if (error instanceof AgentChatError) throw httpError(error);
    throw error;
  }
}
