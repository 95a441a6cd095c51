/**
 * The chat mirror's one transaction (erasing an account, server/chat/stores/index.ts) on whichever engine
 * the app runs (`ATRIUM_TEST_DATABASE=postgres` puts it on PostgreSQL): atomic, and what follows it (the
 * session files go, the sandbox key leaves memory) happens only after it committed, never after a
 * rollback.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { ChatStore } from "../../server/chat/stores/index.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { lines } from "../helpers/streams.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(twoUsers({ env: { APP_CHAT_DATABASE_URL: "sqlite" } }));
});
afterAll(() => t.close());

const count = async (table: string, owner: string) =>
  (await t.ctx.database.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE owner_id = ?`, [owner]))
    ?.n;

async function chatAs(who: string, model: string) {
  const events = await lines(
    await t.request("/api/chat", postJson({ message: "hello", model }, asUser(who))),
  );
  expect(events.at(-1)?.type).toBe("done");
  return `${t.dataDir}/sessions/${who}/${events[0]?.sessionFile as string}`;
}

/** Makes every delete of a stored key fail, on either engine, until the returned function undoes it. */
async function refuseKeyDeletes(): Promise<() => Promise<void>> {
  const db = t.ctx.database;
  if (db.engine === "postgres") {
    await db.exec(`CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
      CREATE TRIGGER test_refuse BEFORE DELETE ON chat_provider_keys FOR EACH ROW EXECUTE FUNCTION test_refuse()`);
    return () => db.exec("DROP TRIGGER test_refuse ON chat_provider_keys; DROP FUNCTION test_refuse()");
  }
  await db.exec(`CREATE TRIGGER test_refuse BEFORE DELETE ON chat_provider_keys
    BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
  return () => db.exec("DROP TRIGGER test_refuse");
}

test("a failed erase changes nothing: rows, session files and the sandbox key in memory all stay", async () => {
  const model = scripted(t, [fauxAssistantMessage("a")]);
  const file = await chatAs("alice", model.id);
  model.dispose();
  const store = new ChatStore(t.ctx.database);
  await store.providerKeys.set("alice", "sandbox", "sbx-key");
  await store.providerKeys.set("alice", "openai", "sk-a");
  const undo = await refuseKeyDeletes();
  let called = false;
  try {
    await expect(
      store.eraseOwner("alice", () => {
        called = true;
      }),
    ).rejects.toThrow("refused by the test");
  } finally {
    await undo();
  }
  expect(called).toBe(false);
  // The sessions were deleted first inside the transaction: the rollback brought them back.
  expect(await count("chat_sessions", "alice")).toBe(1);
  expect(await count("chat_runs", "alice")).toBe(1);
  expect(await count("chat_provider_keys", "alice")).toBe(2);
  expect(store.providerKeys.sandboxKey("alice")).toBe("sbx-key");
  expect(existsSync(file)).toBe(true);
  // Through the route: the same refusal is an error answer, and the session is still listed and on disk.
  const undoAgain = await refuseKeyDeletes();
  try {
    const erased = await t.request("/api/chat/account", { method: "DELETE", headers: asUser("alice") });
    expect(erased.status).toBeGreaterThanOrEqual(500);
  } finally {
    await undoAgain();
  }
  expect(existsSync(file)).toBe(true);
  expect(await count("chat_sessions", "alice")).toBe(1);
});

test("a committed erase runs what follows it after the commit, in order, once", async () => {
  const model = scripted(t, [fauxAssistantMessage("b")]);
  const file = await chatAs("bob", model.id);
  model.dispose();
  const store = new ChatStore(t.ctx.database);
  await store.providerKeys.set("bob", "sandbox", "sbx-bob");
  const seen: { sessions: number; providers: number; rowsThen: Promise<number | undefined> }[] = [];
  const result = await store.eraseOwner("bob", (erased) => {
    // A statement from here goes outside the transaction: it must find the rows already gone (before the
    // commit it would wait for the transaction on SQLite, and see the old rows on PostgreSQL).
    seen.push({
      sessions: erased.sessions.length,
      providers: erased.providers,
      rowsThen: count("chat_sessions", "bob"),
    });
  });
  expect(seen).toHaveLength(1);
  expect(await seen[0]?.rowsThen).toBe(0);
  expect(seen[0]).toMatchObject({ sessions: 1, providers: 1 });
  expect(result.sessions).toHaveLength(1);
  expect(store.providerKeys.sandboxKey("bob")).toBeUndefined();
  // The service removes the session files in that callback: through the route, the file goes.
  const again = scripted(t, [fauxAssistantMessage("c")]);
  const second = await chatAs("bob", again.id);
  again.dispose();
  const erased = await t.json<{ erasedSessions: number }>("/api/chat/account", {
    method: "DELETE",
    headers: asUser("bob"),
  });
  expect(erased.body.erasedSessions).toBe(1);
  expect(existsSync(second)).toBe(false);
  expect(existsSync(file)).toBe(true); // the first erase went through the store alone: its file was not ours to remove
});
