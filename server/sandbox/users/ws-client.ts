/**
 * A WebSocket client over a Unix socket, for relaying preview WebSockets into a local sandbox (relay.ts
 * serves the socket). Bun's WebSocket client cannot dial a Unix socket, so this speaks RFC 6455's client
 * side itself: the upgrade request, the accept check, masked frames out, unmasked frames in (text,
 * binary, fragmented messages, ping/pong, close). Messages are bounded; a larger one closes the link.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Socket } from "bun";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const MAX_HEAD_BYTES = 64 * 1024;

export interface WsHandlers {
  open(): void;
  message(data: string | Buffer): void;
  close(code: number, reason: string): void;
}

export interface WsLink {
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
}

interface State {
  head: Buffer | undefined;
  buffer: Buffer;
  parts: Buffer[];
  partsOp: number;
  backlog: Buffer[];
  closed: boolean;
}

export function connectUnixWebSocket(
  unix: string,
  path: string,
  headers: Record<string, string>,
  handlers: WsHandlers,
): WsLink {
  const key = randomBytes(16).toString("base64");
  const accept = createHash("sha1")
    .update(key + GUID)
    .digest("base64");
  let socket: Socket<State> | undefined;
  const pending: Buffer[] = [];
  let finished = false;
  const finish = (code: number, reason: string) => {
    if (finished) return;
    finished = true;
    handlers.close(code, reason);
  };
  const write = (bytes: Buffer) => {
    if (!socket) return void pending.push(bytes);
    socket.data.backlog.push(bytes);
    flush(socket);
  };

  void Bun.connect<State>({
    unix,
    socket: {
      open(s) {
        s.data = {
          head: Buffer.alloc(0),
          buffer: Buffer.alloc(0),
          parts: [],
          partsOp: 0,
          backlog: [],
          closed: false,
        };
        const lines = [`GET ${path} HTTP/1.1`, "Upgrade: websocket", "Connection: Upgrade"];
        lines.push(`Sec-WebSocket-Key: ${key}`, "Sec-WebSocket-Version: 13");
        for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
        s.write(`${lines.join("\r\n")}\r\n\r\n`);
      },
      data(s, chunk) {
        const state = s.data;
        if (state.head) {
          state.head = Buffer.concat([state.head, chunk]);
          const end = state.head.indexOf("\r\n\r\n");
          if (end < 0) {
            if (state.head.length > MAX_HEAD_BYTES) s.end();
            return;
          }
          const head = state.head.subarray(0, end).toString("latin1");
          const rest = state.head.subarray(end + 4);
          state.head = undefined;
          const status = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1];
          const given = /\r\nsec-websocket-accept:\s*(\S+)/i.exec(head)?.[1];
          if (status !== "101" || given !== accept) {
            s.end();
            return finish(1006, "the server in the sandbox refused the WebSocket");
          }
          socket = s;
          handlers.open();
          for (const bytes of pending.splice(0)) write(bytes);
          chunk = rest;
        }
        state.buffer = Buffer.concat([state.buffer, chunk]);
        readFrames(s, handlers, write, finish);
      },
      drain(s) {
        flush(s);
      },
      close() {
        finish(1006, "");
      },
      error() {},
    },
  }).catch(() => finish(1006, "nothing answers in the sandbox"));

  return {
    send(data) {
      const bytes = typeof data === "string" ? Buffer.from(data) : Buffer.from(data);
      write(frame(typeof data === "string" ? 1 : 2, bytes));
    },
    close(code = 1000, reason = "") {
      const body = Buffer.alloc(2 + Buffer.byteLength(reason));
      body.writeUInt16BE(code);
      body.write(reason, 2);
      write(frame(8, body));
      socket?.end();
    },
  };
}

function readFrames(
  s: Socket<State>,
  handlers: WsHandlers,
  write: (bytes: Buffer) => void,
  finish: (code: number, reason: string) => void,
): void {
  const state = s.data;
  for (;;) {
    const b = state.buffer;
    if (b.length < 2) return;
    const fin = ((b[0] as number) & 0x80) !== 0;
    const op = (b[0] as number) & 0x0f;
    const masked = ((b[1] as number) & 0x80) !== 0;
    let length = (b[1] as number) & 0x7f;
    let offset = 2;
    if (length === 126) {
      if (b.length < 4) return;
      length = b.readUInt16BE(2);
      offset = 4;
    } else if (length === 127) {
      if (b.length < 10) return;
      length = Number(b.readBigUInt64BE(2));
      offset = 10;
    }
    if (length > MAX_MESSAGE_BYTES) {
      s.end();
      finish(1009, "message too large");
      return;
    }
    const maskAt = offset;
    if (masked) offset += 4;
    if (b.length < offset + length) return;
    const payload = Buffer.from(b.subarray(offset, offset + length));
    if (masked) for (let i = 0; i < payload.length; i++) payload[i] ^= b[maskAt + (i % 4)] as number;
    state.buffer = b.subarray(offset + length);
    if (op === 8) {
      const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      write(frame(8, payload.subarray(0, 2)));
      s.end();
      finish(code, payload.subarray(2).toString("utf8"));
      return;
    }
    if (op === 9) write(frame(10, payload));
    if (op !== 0 && op !== 1 && op !== 2) continue;
    if (op !== 0) state.partsOp = op;
    state.parts.push(payload);
    if (state.parts.reduce((n, p) => n + p.length, 0) > MAX_MESSAGE_BYTES) {
      s.end();
      finish(1009, "message too large");
      return;
    }
    if (!fin) continue;
    const whole = Buffer.concat(state.parts.splice(0));
    handlers.message(state.partsOp === 1 ? whole.toString("utf8") : whole);
  }
}

/** A masked client frame. */
function frame(op: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const size = payload.length < 126 ? 0 : payload.length < 65536 ? 2 : 8;
  const head = Buffer.alloc(2 + size + 4);
  head[0] = 0x80 | op;
  if (size === 0) head[1] = 0x80 | payload.length;
  else if (size === 2) {
    head[1] = 0x80 | 126;
    head.writeUInt16BE(payload.length, 2);
  } else {
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(payload.length), 2);
  }
  mask.copy(head, 2 + size);
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i] ^= mask[i % 4] as number;
  return Buffer.concat([head, body]);
}

function flush(s: Socket<State>): void {
  const backlog = s.data.backlog;
  while (backlog.length > 0) {
    const next = backlog[0] as Buffer;
    const written = s.write(next);
    if (written < next.length) {
      backlog[0] = next.subarray(Math.max(written, 0));
      return;
    }
    backlog.shift();
  }
}
