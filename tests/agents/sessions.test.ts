/**
 * Chat sessions and history over HTTP: list filters and paging, history cursors (before/after/limit,
 * has_more), threads, malformed cursors, the inactivity rule, persistence across a restart, and
 * isolation between owners (HTTP and WebSocket).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { agentModel, as, chat } from "../helpers/agents.ts";
import { createTestApp, type TestApp, testDatabaseEnv } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { tempDir } from "../helpers/tmp.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let api: ReturnType<typeof as>;
beforeAll(async () => {
  t = await createTestApp();
  server = listen(t);
  api = as(t);
});
afterAll(async () => {
  await server.stop();
  await t.close();
});

async function agentWithModel(name: string) {
  const model = agentModel(t, (p) => `re: ${p}`, 100);
  return (await api.post("/v1/agents", { name, role: "r", model: model.id })).body;
}

describe("history", () => {
  let sessionId: string;
  let all: {
    message_id: string;
    timestamp: string;
    content: string;
    thread_id: string;
    parent_id: string | null;
  }[];

  beforeAll(async () => {
    const a = await agentWithModel("Historian");
    const c = await chat(server.url, { target_id: a.id, target_type: "agent" });
    sessionId = (await c.next((f) => f.type === "connected")).session_id;
    for (let i = 1; i <= 5; i++) await c.ask(`m${i}`);
    c.close();
    all = (await api.get(`/v1/chat/sessions/${sessionId}/history?limit=200`)).body.messages;
  });

  test("oldest first, unique increasing timestamps, replies parented on the user message", () => {
    expect(all.map((m) => m.content)).toEqual([
      "m1",
      "re: m1",
      "m2",
      "re: m2",
      "m3",
      "re: m3",
      "m4",
      "re: m4",
      "m5",
      "re: m5",
    ]);
    for (let i = 1; i < all.length; i++)
      expect((all[i]?.timestamp ?? "") > (all[i - 1]?.timestamp ?? "")).toBe(true);
    expect(all[1]?.parent_id).toBe(all[0]?.message_id ?? "");
    expect(all[0]?.thread_id).toBe(all[0]?.message_id ?? "");
    expect(all[1]?.thread_id).toBe(all[0]?.message_id ?? "");
  });

  test("limit gives the newest page; before pages back; after pages forward", async () => {
    const get = async (q: string) => (await api.get(`/v1/chat/sessions/${sessionId}/history?${q}`)).body;
    const contents = (page: { messages: { content: string }[] }) => page.messages.map((m) => m.content);
    const newest = await get("limit=3");
    expect(contents(newest)).toEqual(["re: m4", "m5", "re: m5"]);
    expect(newest.has_more).toBe(true);
    const older = await get(`limit=3&before=${encodeURIComponent(newest.messages[0].timestamp)}`);
    expect(contents(older)).toEqual(["m3", "re: m3", "m4"]);
    expect(older.has_more).toBe(true);
    const oldest = await get(`limit=10&before=${encodeURIComponent(older.messages[0].timestamp)}`);
    expect(contents(oldest)).toEqual(["m1", "re: m1", "m2", "re: m2"]);
    expect(oldest.has_more).toBe(false);
    const forward = await get(`limit=4&after=${encodeURIComponent(all[1]?.timestamp ?? "")}`);
    expect(contents(forward)).toEqual(["m2", "re: m2", "m3", "re: m3"]);
    expect(forward.has_more).toBe(true);
    const end = await get(`after=${encodeURIComponent(all[7]?.timestamp ?? "")}`);
    expect(contents(end)).toEqual(["m5", "re: m5"]);
    expect(end.has_more).toBe(false);
    const window = await get(
      `after=${encodeURIComponent(all[0]?.timestamp ?? "")}&before=${encodeURIComponent(all[3]?.timestamp ?? "")}`,
    );
    expect(contents(window)).toEqual(["re: m1", "m2"]);
    const future = await get("after=2999-01-01T00:00:00Z");
    expect(future).toEqual({ messages: [], has_more: false });
  });

  test("thread_id keeps one thread; follow-ups join a thread through context.thread_id", async () => {
    const a = await agentWithModel("Threader");
    const c = await chat(server.url, { target_id: a.id, target_type: "agent" });
    const { session_id } = await c.next((f) => f.type === "connected");
    await c.ask("topic one");
    await c.ask("topic two");
    const history = (await api.get(`/v1/chat/sessions/${session_id}/history`)).body.messages;
    const threadOne = history[0].thread_id;
    await c.ask("more on one", { thread_id: threadOne, parent_id: history[1].message_id });
    c.close();
    const thread = (await api.get(`/v1/chat/sessions/${session_id}/history?thread_id=${threadOne}`)).body;
    expect(thread.messages.map((m: { content: string }) => m.content)).toEqual([
      "topic one",
      "re: topic one",
      "more on one",
      "re: more on one",
    ]);
    expect(thread.messages[2].parent_id).toBe(history[1].message_id);
  });

  test("malformed cursors and limits are 422 naming the parameter; unknown sessions 404", async () => {
    for (const q of [
      "before=yesterday",
      "after=2026-13-45T99:00:00Z",
      "before=12345",
      "limit=0",
      "limit=201",
    ]) {
      const r = await api.get(`/v1/chat/sessions/${sessionId}/history?${q}`);
      expect({ q, status: r.status, loc: r.body.detail[0].loc }).toEqual({
        q,
        status: 422,
        loc: ["query", q.split("=")[0] ?? ""],
      });
    }
    const missing = await api.get("/v1/chat/sessions/chat_nope/history");
    expect(missing.status).toBe(404);
    expect(typeof missing.body.detail).toBe("string");
  });
});

describe("session list and the inactivity rule", () => {
  test("filters, paging, and inactive after 30 minutes or without an active agent; a message reactivates", async () => {
    const a = await agentWithModel("Sleepy");
    const b = await agentWithModel("Awake");
    const ca = await chat(server.url, { target_id: a.id, target_type: "agent" });
    const sa = (await ca.next((f) => f.type === "connected")).session_id;
    await ca.ask("hi");
    const cb = await chat(server.url, { target_id: b.id, target_type: "agent" });
    const sb = (await cb.next((f) => f.type === "connected")).session_id;
    await cb.ask("hi");

    const byTarget = (await api.get(`/v1/chat/sessions?target_id=${a.id}`)).body;
    expect(byTarget).toEqual({
      sessions: [
        expect.objectContaining({ session_id: sa, target_type: "agent", status: "active", message_count: 2 }),
      ],
      total: 1,
      has_more: false,
    });
    // 31 minutes pass for session A.
    const old = new Date(Date.now() - 31 * 60 * 1000).toISOString();
    await t.ctx.database.run("UPDATE agent_sessions SET last_message_at = ? WHERE id = ?", [old, sa]);
    const statusOf = async (id: string) =>
      (await api.get("/v1/chat/sessions?limit=200")).body.sessions.find(
        (s: { session_id: string }) => s.session_id === id,
      )?.status;
    expect(await statusOf(sa)).toBe("inactive");
    expect(await statusOf(sb)).toBe("active");
    const inactive = (await api.get("/v1/chat/sessions?status=inactive")).body.sessions.map(
      (s: { session_id: string }) => s.session_id,
    );
    expect(inactive).toContain(sa);
    expect(inactive).not.toContain(sb);
    // A message to the inactive session reactivates it.
    await ca.ask("back again");
    expect(await statusOf(sa)).toBe("active");
    // No active agent: inactive, and messages are refused until the agent is active again.
    await api.patch(`/v1/agents/${b.id}`, { status: "inactive" });
    expect(await statusOf(sb)).toBe("inactive");
    expect(await cb.ask("anyone?")).toEqual([
      expect.objectContaining({ type: "error", code: "target_inactive" }),
    ]);
    expect(await statusOf(sb)).toBe("inactive");
    ca.close();
    cb.close();

    const total = (await api.get("/v1/chat/sessions")).body.total;
    const page = (await api.get(`/v1/chat/sessions?limit=1&offset=${total - 1}`)).body;
    expect(page.sessions).toHaveLength(1);
    expect(page.has_more).toBe(false);
    expect((await api.get("/v1/chat/sessions?limit=1")).body.has_more).toBe(total > 1);
    for (const q of ["status=asleep", "limit=500", "target_type=robot"])
      expect((await api.get(`/v1/chat/sessions?${q}`)).status).toBe(422);
  });
});

test("shutdown closes sockets (1001) and a restart loses nothing", async () => {
  const dir = tempDir();
  // The restart reopens the same database: app.db in the data dir, or the same PostgreSQL database.
  const env = await testDatabaseEnv();
  try {
    const first = await createTestApp({ dataDir: dir.path, env });
    const s1 = listen(first);
    const agent = (await as(first).post("/v1/agents", { name: "Durable", role: "r" })).body;
    const c = await chat(s1.url, { target_id: agent.id, target_type: "agent" });
    const { session_id } = await c.next((f) => f.type === "connected");
    await c.ask("remember me");
    // Shutting down closes open sockets with 1001.
    first.shutdown();
    expect((await c.closed).code).toBe(1001);
    await s1.stop();
    await first.close();

    const second = await createTestApp({ dataDir: dir.path, env });
    const s2 = listen(second);
    const api2 = as(second);
    expect((await api2.get(`/v1/agents/${agent.id}`)).body.name).toBe("Durable");
    const history = (await api2.get(`/v1/chat/sessions/${session_id}/history`)).body.messages;
    expect(history.map((m: { type: string }) => m.type)).toEqual(["user", "assistant"]);
    const resumed = await chat(s2.url, { session_id });
    expect((await resumed.next((f) => f.type === "connected")).session_id).toBe(session_id);
    resumed.close();
    await s2.stop();
    await second.close();
  } finally {
    dir.remove();
  }
});

test("sessions are isolated between owners, on HTTP and on the socket", async () => {
  const app = await createTestApp(twoUsers());
  const s = listen(app);
  try {
    const alice = as(app, "alice");
    const bob = as(app, "bob");
    const agent = (await alice.post("/v1/agents", { name: "Private", role: "r" })).body;
    const c = await chat(s.url, { target_id: agent.id, target_type: "agent" }, asUser("alice"));
    const { session_id } = await c.next((f) => f.type === "connected");
    await c.ask("alice's secret");
    c.close();
    expect((await bob.get("/v1/chat/sessions")).body).toEqual({ sessions: [], total: 0, has_more: false });
    expect((await bob.get(`/v1/chat/sessions/${session_id}/history`)).status).toBe(404);
    const bobTarget = await chat(s.url, { target_id: agent.id, target_type: "agent" }, asUser("bob"));
    expect((await bobTarget.closed).code).toBe(4404);
    const bobResume = await chat(s.url, { session_id }, asUser("bob"));
    expect((await bobResume.closed).code).toBe(4404);
    expect((await alice.get("/v1/chat/sessions")).body.total).toBe(1);
    // auth_token carries the credential for clients that cannot set headers (browsers).
    const byToken = await chat(s.url, { session_id, auth_token: "token-alice" });
    expect((await byToken.next((f) => f.type === "connected")).session_id).toBe(session_id);
    byToken.close();
    const wrongToken = await chat(s.url, { session_id, auth_token: "token-bob" });
    expect((await wrongToken.closed).code).toBe(4404);
    // No identity: the upgrade itself is refused.
    const anonymous = await fetch(`${s.url}/v1/chat?target_id=${agent.id}&target_type=agent`, {
      headers: {
        upgrade: "websocket",
        connection: "Upgrade",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-version": "13",
      },
    });
    expect(anonymous.status).toBe(401);
    const badToken = await fetch(`${s.url}/v1/chat?session_id=${session_id}&auth_token=forged`, {
      headers: {
        upgrade: "websocket",
        connection: "Upgrade",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-version": "13",
      },
    });
    expect(badToken.status).toBe(401);
    // A token in the query of a plain HTTP request is not a credential.
    expect((await app.request("/v1/agents?auth_token=token-alice")).status).toBe(401);
  } finally {
    await s.stop();
    await app.close();
  }
});
