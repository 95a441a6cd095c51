/**
 * `POST /v1/chat/messages` (Atrium extension): one message to an agent or a fleet and its whole reply
 * as JSON, for programs that do not speak the WebSocket (scripts, Atrium's MCP server). The same session,
 * storage and coordination as the socket (services/ask.ts); the session can be continued with
 * `session_id` here or over the socket. With `Accept: text/event-stream` the frames stream as they come.
 */
import { Elysia } from "elysia";
import * as S from "../../../schemas/agents.ts";
import type { AppContext } from "../../context.ts";
import { requestOrShutdown } from "../../http/abort.ts";
import { sseResponse } from "../../http/sse.ts";
import { askOnce, askStream } from "../services/ask.ts";
import type { AgentChatService } from "../services/chat.ts";
import { ERRORS } from "./responses.ts";

/** What the stream says when the reply fails in a way the chat does not name (no internals leak). */
const STREAM_FAILED = {
  event: "error",
  data: { type: "error", code: "stream_failed", message: "The reply failed" },
};

export function agentMessageRoutes(
  { identity, shutdown }: Pick<AppContext, "identity" | "shutdown">,
  { chat }: { chat: AgentChatService },
) {
  return new Elysia({ name: "atrium/agents/messages", detail: { tags: ["agents"] } })
    .use(identity)
    .guard({ owner: true })
    .post(
      "/v1/chat/messages",
      ({ body, owner, request }) => {
        const signal = requestOrShutdown(request, shutdown);
        if (!request.headers.get("accept")?.includes("text/event-stream"))
          return askOnce(chat, owner, body, signal);
        // The session opens before the stream starts (a refusal is the HTTP error); Elysia's types take
        // a promised Response only as the handler's one answer, hence the cast (it sends it as is).
        return askStream(chat, owner, body).then((produce) =>
          sseResponse(produce, { signal, onError: () => [STREAM_FAILED] }),
        ) as Promise<never>;
      },
      {
        body: S.ChatMessageRequest,
        response: { 200: S.ChatMessageReply, ...ERRORS, 503: ERRORS[404] },
        detail: {
          summary: "Send one message to an agent or fleet and get the whole reply (Atrium extension)",
          description:
            "The WebSocket /v1/chat's conversation over plain HTTP: `target_id` + `target_type` open a new session, `session_id` continues one. With `Accept: text/event-stream` the reply streams as it is written: the socket's frames as `event: <type>` (`stream` chunks naming the speaking member in `metadata`, `tool_call`, `tool_result`, `notice`, `error`), then `event: reply` with this JSON reply. The reply is stored in the session's history like the socket's. 404 unknown target or session, 409 an ended session, a target mismatch or no active agent, 503 the model failed.",
        },
      },
    );
}
