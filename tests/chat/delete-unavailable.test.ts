/**
 * DELETE /api/chat/session when the mirror database cannot be used: the contract's 503 ("mirror
 * unavailable") in the chat envelope, never a 500, and nothing changed (the row, its listing and the
 * session file all stay); once the database is usable again the same delete succeeds. (501 when the
 * mirror is off: tests/chat/owners.test.ts.) On SQLite another process locks app.db or the connection is
 * made read-only; with `ATRIUM_TEST_DATABASE=postgres` the same two failures are made on PostgreSQL: a
 * table another connection holds locked (with a lock timeout), and a database that refuses writes.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { SQL } from "bun";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { chat, scripted } from "../helpers/chat.ts";
import { lines } from "../helpers/streams.ts";

/**
 * Sets a PostgreSQL setting for the app's database and closes the app's pooled connections, so the
 * connections the pool opens next run with it; `undo` resets it the same way.
 */
async function postgresSetting(setting: string): Promise<() => Promise<void>> {
  const db = t.ctx.database;
  const name = (await db.get<{ d: string }>("SELECT current_database() AS d"))?.d as string;
  const apply = async (clause: string) => {
    // READ WRITE: the reset runs on a connection that may already be read-only.
    await db.tx(async (tx) => {
      await tx.exec("SET TRANSACTION READ WRITE");
      await tx.exec(`ALTER DATABASE "${name}" ${clause}`);
    });
    await db.exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    // The connection that ran this is the last old one: it ends too, and the pool notices.
    await db.exec("SELECT pg_terminate_backend(pg_backend_pid())").catch(() => {});
    for (let i = 0; i < 50; i++) {
      if (await db.get("SELECT 1 AS one").catch(() => undefined)) break;
      await Bun.sleep(20);
    }
  };
  await apply(`SET ${setting}`);
  return () => apply(`RESET ${setting.split(" ")[0]}`);
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** A session with a mirrored row and a file on disk. */
async function session(): Promise<{ sessionId: string; file: string }> {
  const model = scripted(t, [fauxAssistantMessage("Noted.")]);
  const events = await lines(await chat(t, { message: "Remember this", model: model.id }));
  model.dispose();
  const { sessionId, sessionFile } = events[0] as { sessionId: string; sessionFile: string };
  return { sessionId, file: join(t.dataDir, "sessions", "local", sessionFile) };
}

const listed = async () =>
  (await t.json<{ sessions: { id: string }[] }>("/api/chat/sessions")).body.sessions.map((s) => s.id);

async function expectUnavailable(sessionId: string, code: string) {
  const response = await t.request(`/api/chat/session?sessionId=${sessionId}`, { method: "DELETE" });
  expect(response.status).toBe(503);
  // The chat envelope, the reason in words, no stack or path.
  expect(await response.json()).toEqual({
    message: `The chat mirror database is unavailable (${code}); nothing was deleted`,
  });
}

test("a database another process holds locked: 503, nothing deleted; then the delete goes through", async () => {
  const { sessionId, file } = await session();
  expect(await listed()).toContain(sessionId);
  if (t.ctx.database.engine === "postgres") {
    const undo = await postgresSetting("lock_timeout = '50ms'");
    const other = new SQL(t.ctx.env.get("APP_DATABASE_URL") as string);
    const held = await other.reserve();
    try {
      await held.unsafe("BEGIN; LOCK TABLE chat_sessions IN ACCESS EXCLUSIVE MODE");
      await expectUnavailable(sessionId, "55P03");
    } finally {
      await held.unsafe("ROLLBACK");
      held.release();
      await other.close();
      await undo();
    }
  } else {
    const other = new Database(join(t.dataDir, "app.db"));
    other.exec("BEGIN IMMEDIATE");
    other.run("DELETE FROM chat_sessions");
    t.ctx.db!.exec("PRAGMA busy_timeout = 50");
    try {
      await expectUnavailable(sessionId, "SQLITE_BUSY");
    } finally {
      other.exec("ROLLBACK");
      other.close();
      t.ctx.db!.exec("PRAGMA busy_timeout = 5000");
    }
  }
  expect(await listed()).toContain(sessionId);
  expect(existsSync(file)).toBe(true);
  const retried = await t.request(`/api/chat/session?sessionId=${sessionId}`, { method: "DELETE" });
  expect(retried.status).toBe(200);
  expect(await listed()).not.toContain(sessionId);
  expect(existsSync(file)).toBe(false);
});

test("a database that refuses writes (read-only): 503 and the session stays whole", async () => {
  const { sessionId, file } = await session();
  if (t.ctx.database.engine === "postgres") {
    const undo = await postgresSetting("default_transaction_read_only = on");
    try {
      await expectUnavailable(sessionId, "25006");
    } finally {
      await undo();
    }
  } else {
    t.ctx.db!.exec("PRAGMA query_only = ON");
    try {
      await expectUnavailable(sessionId, "SQLITE_READONLY");
    } finally {
      t.ctx.db!.exec("PRAGMA query_only = OFF");
    }
  }
  expect(await listed()).toContain(sessionId);
  expect(existsSync(file)).toBe(true);
  const hydrated = await t.json<{ messages: unknown[] }>(`/api/chat/session?sessionId=${sessionId}`);
  expect(hydrated.body.messages).toHaveLength(2);
});
