/**
 * The WebSocket /v1/chat: connection parameters in the query (`session_id`, `target_id`, `target_type`,
 * `auth_token`, optional `max_turns` and `temperature`), then JSON frames. A refused connection gets an
 * `error` frame and a close with a 44xx code and a reason; an invalid frame gets an `error` frame and the
 * socket stays open. Messages on one socket run one after another; closing the socket aborts the reply
 * in progress. Frames larger than the server's limit are refused by Bun (close 1009) before they reach
 * this handler.
 */
import { Elysia } from "elysia";
import type { Identity } from "../auth/identity.ts";
import { isoNow } from "../lib/clock.ts";
import type { Logger } from "../log.ts";
import { ChatError, type ChatError as ChatErrorType, type ChatService, type Frame } from "./chat-service.ts";

/** Close codes: 4400 bad connection parameters, 4401 no identity, 4404 unknown target or session, 4409 target mismatch, 4410 ended session. */
export const CLOSE = { normal: 1000, invalid: 4400, unauthorized: 4401 } as const;

interface Connection {
  ws: SocketLike;
  owner: string;
  sessionId: string;
  queue: Promise<void>;
  abort: AbortController;
}

interface SocketLike {
  id: string;
  send(data: string): unknown;
  close(code?: number, reason?: string): unknown;
  data: { query: Record<string, string | undefined>; identity?: Identity };
}

const send = (ws: SocketLike, frame: Frame) => ws.send(JSON.stringify(frame));
const errorFrame = (code: string, message: string, extra: Record<string, unknown> = {}): Frame => ({
  type: "error",
  code,
  message,
  timestamp: isoNow(),
  ...extra,
});

function numberParam(raw: string | undefined, name: string, min: number, max: number, integer: boolean) {
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n)))
    throw new ChatError(
      "invalid_connection",
      `${name} must be ${integer ? "an integer" : "a number"} from ${min} to ${max}`,
      4400,
    );
  return n;
}

export function chatSocket(chat: ChatService, log: Logger, shutdown?: AbortSignal) {
  const connections = new Map<string, Connection>();
  // On shutdown, replies stop and sockets close (1001), so the server does not wait on idle sockets.
  shutdown?.addEventListener("abort", () => {
    for (const conn of connections.values()) {
      conn.abort.abort();
      conn.ws.close(1001, "server shutting down");
    }
    connections.clear();
  });

  const refuse = (ws: SocketLike, error: ChatErrorType) => {
    send(ws, errorFrame(error.code, error.message));
    // The reason is the error code in words: a close reason is capped at 123 bytes, and the details
    // (which may quote user input) are in the error frame just sent.
    if (error.closeCode) ws.close(error.closeCode, error.code.replaceAll("_", " "));
  };

  function open(ws: SocketLike) {
    const identity = ws.data.identity;
    if (!identity) {
      send(ws, errorFrame("unauthorized", "Authentication required"));
      ws.close(CLOSE.unauthorized, "Authentication required");
      return;
    }
    const q = ws.data.query ?? {};
    try {
      const { session, target } = chat.connect(identity.id, {
        session_id: q.session_id || undefined,
        target_id: q.target_id || undefined,
        target_type: q.target_type || undefined,
        max_turns: numberParam(q.max_turns, "max_turns", 1, 50, true),
        temperature: numberParam(q.temperature, "temperature", 0, 2, false),
      });
      connections.set(ws.id, {
        ws,
        owner: identity.id,
        sessionId: session.id,
        queue: Promise.resolve(),
        abort: new AbortController(),
      });
      send(ws, {
        type: "connected",
        status: "connected",
        session_id: session.id,
        target,
        session_status: session.status,
      });
    } catch (error) {
      if (error instanceof ChatError) return refuse(ws, error);
      log.error("chat connection failed", { error });
      send(ws, errorFrame("internal_error", "The connection could not be set up"));
      ws.close(1011, "internal error");
    }
  }

  function message(ws: SocketLike, raw: unknown) {
    const conn = connections.get(ws.id);
    if (!conn) return;
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      send(
        ws,
        errorFrame("invalid_frame", "A frame must be a JSON object with a type: message or end_session"),
      );
      return;
    }
    const frame = raw as Record<string, unknown>;
    if (frame.session_id !== undefined && frame.session_id !== conn.sessionId) {
      send(ws, errorFrame("session_mismatch", `This socket is bound to session ${conn.sessionId}`));
      return;
    }
    if (frame.type === "end_session") {
      conn.queue = conn.queue.then(() => {
        const timestamp = chat.end(conn.owner, conn.sessionId);
        send(ws, { type: "session_ended", session_id: conn.sessionId, timestamp });
        connections.delete(ws.id);
        ws.close(CLOSE.normal, "session ended");
      });
      return;
    }
    if (frame.type !== "message") {
      send(
        ws,
        errorFrame(
          "invalid_frame",
          `Unknown frame type ${JSON.stringify(frame.type ?? null)}; expected message or end_session`,
        ),
      );
      return;
    }
    const content = frame.content;
    if (typeof content !== "string" || content.trim() === "") {
      send(ws, errorFrame("invalid_frame", "content must be a non-empty string", { loc: ["content"] }));
      return;
    }
    const context = frame.context;
    if (
      context !== undefined &&
      (typeof context !== "object" || context === null || Array.isArray(context))
    ) {
      send(ws, errorFrame("invalid_frame", "context must be an object", { loc: ["context"] }));
      return;
    }
    conn.queue = conn.queue.then(() =>
      chat
        .message(
          conn.owner,
          conn.sessionId,
          { content, context: context as Record<string, unknown> | undefined },
          (f) => send(ws, f),
          conn.abort.signal,
        )
        .catch((error) => {
          if (conn.abort.signal.aborted) return;
          if (error instanceof ChatError) return refuse(ws, error);
          log.error("chat reply failed", { error, sessionId: conn.sessionId });
          send(ws, errorFrame("internal_error", "The reply failed; the session is still open"));
        }),
    );
  }

  function close(ws: SocketLike) {
    const conn = connections.get(ws.id);
    conn?.abort.abort();
    connections.delete(ws.id);
  }

  return { open, message, close, connections };
}

export function chatSocketRoute(chat: ChatService, identity: Elysia, log: Logger, shutdown: AbortSignal) {
  const handlers = chatSocket(chat, log, shutdown);
  return new Elysia({ name: "atrium/agents/ws" }).use(identity).ws("/v1/chat", {
    detail: { hide: true },
    open: (ws) => handlers.open(ws as unknown as SocketLike),
    message: (ws, raw) => handlers.message(ws as unknown as SocketLike, raw),
    close: (ws) => handlers.close(ws as unknown as SocketLike),
  });
}
