/**
 * DELETE /api/chat/session when the mirror database cannot be used: the contract's 503 ("mirror
 * unavailable") in the chat envelope, never a 500, and nothing changed (the row, its listing and the
 * session file all stay); once the database is usable again the same delete succeeds. (501 when the
 * mirror is off: tests/chat/owners.test.ts.)
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { chat, scripted } from "../helpers/chat.ts";
import { lines } from "../helpers/streams.ts";

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
  const other = new Database(join(t.dataDir, "app.db"));
  other.exec("BEGIN IMMEDIATE");
  other.run("DELETE FROM chat_sessions");
  t.ctx.db.exec("PRAGMA busy_timeout = 50");
  try {
    await expectUnavailable(sessionId, "SQLITE_BUSY");
  } finally {
    other.exec("ROLLBACK");
    other.close();
    t.ctx.db.exec("PRAGMA busy_timeout = 5000");
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
  t.ctx.db.exec("PRAGMA query_only = ON");
  try {
    await expectUnavailable(sessionId, "SQLITE_READONLY");
  } finally {
    t.ctx.db.exec("PRAGMA query_only = OFF");
  }
  expect(await listed()).toContain(sessionId);
  expect(existsSync(file)).toBe(true);
  const hydrated = await t.json<{ messages: unknown[] }>(`/api/chat/session?sessionId=${sessionId}`);
  expect(hydrated.body.messages).toHaveLength(2);
});
