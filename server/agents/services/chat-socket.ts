/**
 * The socket session machinery of /v1/chat, independent of Elysia: one connection per socket (its
 * owner, its session, a queue so messages on one socket run one after another, an abort that closing
 * the socket fires), connection parameters read from the query (`session_id`, `target_id`,
 * `target_type`, optional `max_turns` and `temperature`), and every client frame checked by
 * frames.ts. A refused connection gets an `error` frame and a close with a 44xx code and a reason; an
 * invalid frame gets an `error` frame and the socket stays open. Frames larger than the server's limit
 * are refused by Bun (close 1009) before they reach this code. The chat itself is `SocketChat`,
 * implemented by the chat service. An open socket is held with its identity (auth/live-connections.ts):
 * when the credential is revoked (account disabled or deleted, session ended), the reply in progress is
 * aborted and the socket closes with 4401.
 */
import type { Identity } from "../../auth/identity.ts";
import type { LiveConnections } from "../../auth/live-connections.ts";
import type { Logger } from "../../log.ts";
import {
  AgentChatError,
  errorFrame,
  type Frame,
  type MessageContext,
  readClientFrame,
  type Send,
} from "../runtime/frames.ts";

/** Close codes: 4400 bad connection parameters, 4401 no identity, 4404 unknown target or session, 4409 target mismatch, 4410 ended session. */
export const CLOSE = { normal: 1000, invalid: 4400, unauthorized: 4401 } as const;

export interface ConnectParams {
  session_id?: string;
  target_id?: string;
  target_type?: string;
  max_turns?: number;
  temperature?: number;
}

export interface ChatTarget {
  id: string;
  type: "agent" | "fleet";
  name: string;
}

/** What the socket needs from the chat: open or resume a session, run one message, end the session. */
export interface SocketChat {
  connect(
    owner: string,
    params: ConnectParams,
  ): Promise<{ session: { id: string; status: string }; target: ChatTarget }>;
  message(
    owner: string,
    sessionId: string,
    frame: { content: string; context?: MessageContext },
    send: Send,
    signal: AbortSignal,
  ): Promise<unknown>;
  end(owner: string, sessionId: string): Promise<string>;
}

/** The parts of a Bun/Elysia socket this code uses. */
export interface SocketLike {
  id: string;
  send(data: string): unknown;
  close(code?: number, reason?: string): unknown;
  data: { query: Record<string, string | undefined>; identity?: Identity };
}

interface Connection {
  ws: SocketLike;
  owner: string;
  /** Empty until the session is open (connecting reads the database). */
  sessionId: string;
  /** Settles when the connection is set up or refused: frames that arrive before wait for it. */
  ready: Promise<void>;
  queue: Promise<void>;
  abort: AbortController;
  /** Stops watching the credential (the socket closed). */
  release: () => void;
}

const send = (ws: SocketLike, frame: Frame) => ws.send(JSON.stringify(frame));

function numberParam(raw: string | undefined, name: string, min: number, max: number, integer: boolean) {
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n)))
    throw new AgentChatError(
      "invalid_connection",
      `${name} must be ${integer ? "an integer" : "a number"} from ${min} to ${max}`,
      CLOSE.invalid,
    );
  return n;
}

export function chatSocket(
  chat: SocketChat,
  log: Logger,
  shutdown?: AbortSignal,
  live?: Pick<LiveConnections, "hold">,
) {
  const connections = new Map<string, Connection>();
  const drop = (id: string) => {
    const conn = connections.get(id);
    conn?.abort.abort();
    conn?.release();
    connections.delete(id);
  };
  // On shutdown, replies stop and sockets close (1001), so the server does not wait on idle sockets.
  shutdown?.addEventListener("abort", () => {
    for (const [id, conn] of connections) {
      drop(id);
      conn.ws.close(1001, "server shutting down");
    }
  });

  const refuse = (ws: SocketLike, error: AgentChatError) => {
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
    const conn: Connection = {
      ws,
      owner: identity.id,
      sessionId: "",
      ready: Promise.resolve(),
      queue: Promise.resolve(),
      abort: new AbortController(),
      release: () => {},
    };
    connections.set(ws.id, conn);
    conn.ready = connect(ws, conn, identity);
  }

  async function connect(ws: SocketLike, conn: Connection, identity: Identity): Promise<void> {
    const q = ws.data.query ?? {};
    try {
      const { session, target } = await chat.connect(identity.id, {
        session_id: q.session_id || undefined,
        target_id: q.target_id || undefined,
        target_type: q.target_type || undefined,
        max_turns: numberParam(q.max_turns, "max_turns", 1, 50, true),
        temperature: numberParam(q.temperature, "temperature", 0, 2, false),
      });
      const revoked = () => {
        drop(ws.id);
        send(ws, errorFrame("unauthorized", "The credential of this connection was revoked"));
        ws.close(CLOSE.unauthorized, "Authentication revoked");
      };
      // The socket closed while the session was being opened: nothing to hold.
      if (connections.get(ws.id) !== conn) return;
      conn.sessionId = session.id;
      conn.release = live?.hold(identity, revoked) ?? (() => {});
      send(ws, {
        type: "connected",
        status: "connected",
        session_id: session.id,
        target,
        session_status: session.status,
      });
    } catch (error) {
      connections.delete(ws.id);
      if (error instanceof AgentChatError) return refuse(ws, error);
      log.error("chat connection failed", { error });
      send(ws, errorFrame("internal_error", "The connection could not be set up"));
      ws.close(1011, "internal error");
    }
  }

  function message(ws: SocketLike, raw: unknown) {
    const conn = connections.get(ws.id);
    if (!conn) return;
    if (!conn.sessionId) {
      // Still connecting: handled once connected (in arrival order), dropped if the connection is refused.
      void conn.ready.then(() => message(ws, raw));
      return;
    }
    const frame = readClientFrame(raw, conn.sessionId);
    if (frame.kind === "invalid") {
      send(ws, frame.error);
      return;
    }
    if (frame.kind === "end_session") {
      conn.queue = conn.queue.then(async () => {
        const timestamp = await chat.end(conn.owner, conn.sessionId);
        send(ws, { type: "session_ended", session_id: conn.sessionId, timestamp });
        drop(ws.id);
        ws.close(CLOSE.normal, "session ended");
      });
      return;
    }
    const { content, context } = frame;
    conn.queue = conn.queue.then(() =>
      chat
        .message(conn.owner, conn.sessionId, { content, context }, (f) => send(ws, f), conn.abort.signal)
        .then(() => {})
        .catch((error) => {
          if (conn.abort.signal.aborted) return;
          if (error instanceof AgentChatError) return refuse(ws, error);
          log.error("chat reply failed", { error, sessionId: conn.sessionId });
          send(ws, errorFrame("internal_error", "The reply failed; the session is still open"));
        }),
    );
  }

  function close(ws: SocketLike) {
    drop(ws.id);
  }

  return { open, message, close, connections };
}
