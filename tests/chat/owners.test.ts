/** Ownership: session delete and account erase touch only the caller's data; another owner's session is a 404. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { chatFolders } from "../../server/chat/runtime/chat-folders.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { lines } from "../helpers/streams.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

const as = (who: string) => asUser(who);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(twoUsers({ env: { APP_CHAT_DATABASE_URL: "sqlite" } }));
});
afterAll(() => t.close());

async function sessionOf(who: string, model: string, message: string) {
  const events = await lines(await t.request("/api/chat", postJson({ message, model }, as(who))));
  expect(events.at(-1)?.type).toBe("done");
  const sessionFile = events[0]?.sessionFile as string;
  return {
    sessionId: events[0]?.sessionId as string,
    sessionFile,
    /** Where it is on disk: responses name it relative to the owner's sessions folder. */
    path: `${t.dataDir}/sessions/${who}/${sessionFile}`,
    runId: events[0]?.runId as string,
  };
}

test("anonymous callers get 401 in protected mode", async () => {
  expect((await t.request("/api/chat", postJson({ message: "hi" }))).status).toBe(401);
  expect((await t.request("/api/chat/sessions")).status).toBe(401);
});

test("each owner has their own sessions folder, workspace and list", async () => {
  const model = scripted(t, [fauxAssistantMessage("a"), fauxAssistantMessage("b")]);
  const alice = await sessionOf("alice", model.id, "alice's chat");
  const bob = await sessionOf("bob", model.id, "bob's chat");
  expect(existsSync(alice.path)).toBe(true);
  expect(existsSync(bob.path)).toBe(true);
  const aliceList = await t.json<{ sessions: { id: string }[] }>("/api/chat/sessions", {
    headers: as("alice"),
  });
  expect(aliceList.body.sessions.map((s) => s.id)).toEqual([alice.sessionId]);
  // Bob cannot read, hydrate by file, attach to, or inspect the runs of alice's session.
  const byPath = await t.request(`/api/chat/session?sessionFile=${encodeURIComponent(alice.path)}`, {
    headers: as("bob"),
  });
  expect(byPath.status).toBe(400);
  // Alice's file name is taken in bob's own folder: not there, so there is nothing to show him.
  const byName = await t.request(`/api/chat/session?sessionFile=${encodeURIComponent(alice.sessionFile)}`, {
    headers: as("bob"),
  });
  expect(byName.status).toBe(404);
  expect(
    (await t.request(`/api/chat/session?sessionId=${alice.sessionId}`, { headers: as("bob") })).status,
  ).toBe(404);
  expect((await t.request("/api/attach", postJson({ sessionId: alice.sessionId }, as("bob")))).status).toBe(
    404,
  );
  expect((await t.request(`/api/chat/provenance?runId=${alice.runId}`, { headers: as("bob") })).status).toBe(
    404,
  );
  const runs = await t.json<{ runs: unknown[] }>(`/api/chat/runs?sessionId=${alice.sessionId}`, {
    headers: as("bob"),
  });
  expect(runs.body.runs).toEqual([]);
  model.dispose();
});

test("session delete: another owner's session is 404 and untouched; the owner's delete removes rows and file", async () => {
  const model = scripted(t, [
    fauxAssistantMessage([fauxToolCall("write", { path: "a.txt", content: "x" }, { id: "w1" })], {
      stopReason: "toolUse",
    }),
    fauxAssistantMessage("written"),
  ]);
  const alice = await sessionOf("alice", model.id, "to delete");
  const count = async (sql: string) => (await t.ctx.database.get<{ n: number }>(sql, [alice.runId]))?.n;
  expect(await count("SELECT COUNT(*) AS n FROM chat_tool_calls WHERE run_id = ?")).toBe(1);
  expect(await count("SELECT COUNT(*) AS n FROM chat_file_mutations WHERE run_id = ?")).toBe(1);
  const query = `/api/chat/session?sessionId=${alice.sessionId}`;
  const denied = await t.json(query, { method: "DELETE", headers: as("bob") });
  expect(denied).toMatchObject({ status: 404, body: { ok: false, reason: "session-not-owned-or-missing" } });
  expect(existsSync(alice.path)).toBe(true);

  const deleted = await t.json(query, { method: "DELETE", headers: as("alice") });
  expect(deleted).toMatchObject({
    status: 200,
    body: { ok: true, sessionId: alice.sessionId, sessionFile: alice.sessionFile },
  });
  expect(existsSync(alice.path)).toBe(false);
  for (const [table, column] of [
    ["chat_runs", "id"],
    ["chat_tool_calls", "run_id"],
    ["chat_file_mutations", "run_id"],
  ]) {
    const n = await count(`SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = ?`);
    expect({ table, n }).toEqual({ table, n: 0 });
  }
  expect((await t.json(query, { method: "DELETE", headers: as("alice") })).status).toBe(404);
  model.dispose();
});

test("account erase removes every session and stored key of the caller only", async () => {
  const model = scripted(t, [
    fauxAssistantMessage("a"),
    fauxAssistantMessage("b"),
    fauxAssistantMessage("c"),
  ]);
  const bob1 = await sessionOf("bob", model.id, "bob one");
  const alice = await sessionOf("alice", model.id, "alice stays");
  expect(
    (await t.request("/api/chat/providers", postJson({ provider: "openai", apiKey: "sk-bob" }, as("bob"))))
      .status,
  ).toBe(200);
  expect(
    (
      await t.request(
        "/api/chat/providers",
        postJson({ provider: "openai", apiKey: "sk-alice" }, as("alice")),
      )
    ).status,
  ).toBe(200);
  const bobSessions = (await t.json<{ sessions: unknown[] }>("/api/chat/sessions", { headers: as("bob") }))
    .body.sessions.length;

  const erased = await t.json<Record<string, unknown>>("/api/chat/account", {
    method: "DELETE",
    headers: as("bob"),
  });
  expect(erased.status).toBe(200);
  expect(erased.body).toMatchObject({
    ok: true,
    scope: "app-mirror",
    erasedSessions: bobSessions,
    erasedProviders: 1,
  });
  expect(typeof erased.body.message).toBe("string");
  expect(existsSync(bob1.path)).toBe(false);
  expect(
    (await t.json<{ sessions: unknown[] }>("/api/chat/sessions", { headers: as("bob") })).body.sessions,
  ).toEqual([]);
  const bobProviders = await t.json<{ providers: { id: string; configured: boolean }[] }>(
    "/api/chat/providers",
    { headers: as("bob") },
  );
  expect(bobProviders.body.providers.find((p) => p.id === "openai")?.configured).toBe(false);

  // Alice's data is untouched.
  expect(existsSync(alice.path)).toBe(true);
  const aliceList = await t.json<{ sessions: { id: string }[] }>("/api/chat/sessions", {
    headers: as("alice"),
  });
  expect(aliceList.body.sessions.map((s) => s.id)).toContain(alice.sessionId);
  const aliceProviders = await t.json<{ providers: { id: string; configured: boolean }[] }>(
    "/api/chat/providers",
    { headers: as("alice") },
  );
  expect(aliceProviders.body.providers.find((p) => p.id === "openai")?.configured).toBe(true);
  model.dispose();
});

test("without a chat database, protected mode answers 501 to session delete", async () => {
  const other = await createTestApp(twoUsers());
  const response = await other.request("/api/chat/session?sessionId=x", {
    method: "DELETE",
    headers: as("alice"),
  });
  expect(response.status).toBe(501);
  await other.close();
});

test("owner folders never coincide: an id cannot name the folder an encoded id gets", () => {
  const folders = ["a.b", "x612e62", "=a", `${"long-id/".repeat(20)}1`, `${"long-id/".repeat(20)}2`].map(
    (owner) => chatFolders("/data", owner).workspaceDir,
  );
  expect(new Set(folders).size).toBe(folders.length);
  for (const folder of folders) expect(folder.startsWith("/data/workspaces/")).toBe(true);
});
