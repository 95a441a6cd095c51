/**
 * Helpers for the local-surface tests: a raw HTTP/1.1 exchange over a socket (for WebSocket upgrades,
 * whose status a WebSocket client never shows), the headers of an upgrade, and a fingerprint of
 * everything a server stores, to show that refused requests changed nothing.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { TestApp } from "./app.ts";

export interface RawResponse {
  status: number;
  head: string;
  body: string;
}

/**
 * Sends one request as written and reads the status line, headers and (Content-Length) body. A 101
 * resolves as soon as its head arrives; the socket is then closed.
 */
export function rawRequest(
  port: number,
  request: { method?: string; path: string; headers: Record<string, string>; body?: string },
): Promise<RawResponse> {
  const body = request.body ?? "";
  const lines = [`${request.method ?? "GET"} ${request.path} HTTP/1.1`];
  for (const [name, value] of Object.entries(request.headers)) lines.push(`${name}: ${value}`);
  if (body) lines.push(`content-length: ${Buffer.byteLength(body)}`);
  const text = `${lines.join("\r\n")}\r\n\r\n${body}`;
  return new Promise((resolve, reject) => {
    let received = "";
    let settled = false;
    const finish = (socket?: { end(): void }) => {
      const parsed = parse(received);
      if (!parsed || settled) return;
      settled = true;
      socket?.end();
      resolve(parsed);
    };
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open: (socket) => void socket.write(text),
        data(socket, chunk) {
          received += new TextDecoder().decode(chunk);
          const parsed = parse(received);
          if (parsed && (parsed.status === 101 || parsed.complete)) finish(socket);
        },
        close: () => {
          finish();
          if (!settled) reject(new Error(`connection closed after ${JSON.stringify(received)}`));
        },
        error: (_socket, error) => reject(error),
        connectError: (_socket, error) => reject(error),
      },
    }).catch(reject);
  });
}

function parse(received: string): (RawResponse & { complete: boolean }) | undefined {
  const end = received.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const head = received.slice(0, end);
  const status = Number(head.split(" ")[1]);
  const body = received.slice(end + 4);
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1];
  return { status, head, body, complete: length !== undefined && Buffer.byteLength(body) >= Number(length) };
}

/** Headers of a WebSocket upgrade to `host`, as a page of `origin` would send them. */
export function upgradeHeaders(host: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    host,
    connection: "Upgrade",
    upgrade: "websocket",
    "sec-websocket-version": "13",
    "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    ...extra,
  };
}

/**
 * A hash of every row of every table (app.db's, or PostgreSQL's in the PostgreSQL run) and of every file
 * in the data dir (the database files aside).
 */
export async function stateHash(t: TestApp): Promise<string> {
  const hash = createHash("sha256");
  const { db } = t.ctx;
  if (db) {
    const tables = db.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
      name: string;
    }[];
    for (const { name } of tables) {
      hash.update(name);
      hash.update(JSON.stringify(db.query(`SELECT * FROM "${name}"`).all()));
    }
  } else {
    const onPostgres = await t.ctx.database.all<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    for (const { name } of onPostgres) {
      // No ORDER BY fits every table: the rows are sorted as text, which is what the hash needs.
      const rows = (await t.ctx.database.all(`SELECT * FROM "${name}"`)).map((r) => JSON.stringify(r)).sort();
      hash.update(`pg:${name}`);
      hash.update(rows.join("\n"));
    }
  }
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir).sort()) {
      const path = join(dir, entry);
      if (/^app\.db/.test(entry)) continue;
      hash.update(relative(t.dataDir, path));
      if (statSync(path).isDirectory()) walk(path);
      else hash.update(readFileSync(path));
    }
  };
  walk(t.dataDir);
  return hash.digest("hex");
}
