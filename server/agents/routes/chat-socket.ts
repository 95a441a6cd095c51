/**
 * The WebSocket route /v1/chat: Elysia's `.ws()` handing open, message and close to the socket
 * machinery (services/chat-socket.ts). The identity plugin resolves the upgrade's identity (cookie,
 * `Authorization`, or `auth_token` in the query); the socket refuses a missing one with an error frame
 * and a 4401 close, as the protocol says, rather than an HTTP 401.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { chatSocket, type SocketChat, type SocketLike } from "../services/chat-socket.ts";

export function chatSocketRoutes(
  { identity, log, shutdown, connections }: Pick<AppContext, "identity" | "log" | "shutdown" | "connections">,
  { chat }: { chat: SocketChat },
) {
  const handlers = chatSocket(chat, log, shutdown, connections);
  return new Elysia({ name: "atrium/agents/ws" }).use(identity).ws("/v1/chat", {
    detail: { hide: true },
    open: (ws) => handlers.open(ws as unknown as SocketLike),
    message: (ws, raw) => handlers.message(ws as unknown as SocketLike, raw),
    close: (ws) => handlers.close(ws as unknown as SocketLike),
  });
}
