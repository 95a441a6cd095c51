/**
 * The agents family's transactions (docs/database.md, "Transactions and their tests"), on whichever engine
 * the app runs (`ATRIUM_TEST_DATABASE=postgres` for PostgreSQL): a fleet with its members (created,
 * updated), an agent or fleet deleted with its memory, a message counted on its session. Each is made to
 * fail part-way by the database itself (a constraint, or a trigger refusing the last write) and leaves
 * nothing of itself behind. A message's transaction sends nothing itself; the chat socket's frames follow
 * it, and the last test reads the rows back the moment its frame arrives.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { AgentChatStore } from "../../server/agents/stores/chat.ts";
import { type FleetRecord, FleetStore } from "../../server/agents/stores/fleets.ts";
import { deleteHolder } from "../../server/agents/stores/holders.ts";
import { agentModel, chat } from "../helpers/agents.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { failingWith, rows } from "../helpers/refuse-writes.ts";

let t: TestApp;
let agentA: string;
let agentB: string;
beforeAll(async () => {
  t = await createTestApp();
  const make = async (name: string) =>
    (await t.json<{ id: string }>("/v1/agents", postJson({ name, role: "tester" }))).body.id;
  agentA = await make("A");
  agentB = await make("B");
});
afterAll(() => t.close());

const now = () => new Date().toISOString();
const fleet = (id: string, agentIds: string[], name = "F"): FleetRecord => ({
  id,
  name,
  description: "",
  type: "CUSTOM",
  agent_ids: agentIds,
  coordination_pattern: "sequential",
  config: {},
  status: "active",
  created_at: now(),
  updated_at: now(),
});

test("FleetStore.insert: a member that is no agent refuses the whole fleet, row and members", async () => {
  const fleets = new FleetStore(t.ctx.database);
  const error = await fleets.insert("local", fleet("flt_bad", [agentA, "agt_nobody"])).catch((e) => e);
  expect(error).toBeInstanceOf(Error);
  expect(await rows(t.ctx.database, "fleets", "id = ?", ["flt_bad"])).toBe(0);
  expect(await rows(t.ctx.database, "fleet_agents", "fleet_id = ?", ["flt_bad"])).toBe(0);
});

test("FleetStore.update: a refused member leaves the fleet's fields and its old members as they were", async () => {
  const fleets = new FleetStore(t.ctx.database);
  await fleets.insert("local", fleet("flt_up", [agentA]));
  await failingWith(t.ctx.database, ["fleet_agents", "INSERT"], () =>
    fleets.update("local", fleet("flt_up", [agentB], "Renamed")),
  );
  const kept = await fleets.get("local", "flt_up");
  expect(kept?.name).toBe("F");
  expect(kept?.agent_ids).toEqual([agentA]);
  // Without the refusal the same update lands whole.
  await fleets.update("local", fleet("flt_up", [agentB], "Renamed"));
  expect(await fleets.get("local", "flt_up")).toMatchObject({ name: "Renamed", agent_ids: [agentB] });
});

test("deleteHolder: an agent whose row cannot go keeps its memory", async () => {
  const { body: agent } = await t.json<{ id: string }>("/v1/agents", postJson({ name: "M", role: "tester" }));
  const memory = await t.request(
    "/v1/memory",
    postJson({ owner_id: agent.id, owner_type: "agent", type: "CONTEXT", content: "keep me" }),
  );
  expect(memory.status).toBeLessThan(300);
  const where = "holder_id = ?";
  expect(await rows(t.ctx.database, "memory_entries", where, [agent.id])).toBe(1);
  // The memory goes first inside the transaction; the agent's own delete is refused after it.
  await failingWith(t.ctx.database, ["agents", "DELETE"], () =>
    deleteHolder(t.ctx.database, "agent", "local", agent.id),
  );
  expect(await rows(t.ctx.database, "memory_entries", where, [agent.id])).toBe(1);
  expect((await t.request(`/v1/agents/${agent.id}`)).status).toBe(200);
  await deleteHolder(t.ctx.database, "agent", "local", agent.id);
  expect(await rows(t.ctx.database, "memory_entries", where, [agent.id])).toBe(0);
  expect((await t.request(`/v1/agents/${agent.id}`)).status).toBe(404);
});

test("AgentChatStore.appendMessage: a message whose session cannot be counted is not stored", async () => {
  const chat = new AgentChatStore(t.ctx.database);
  const session = {
    id: "ses_tx",
    target_id: agentA,
    target_type: "agent" as const,
    status: "active" as const,
    config: {},
    message_count: 0,
    created_at: now(),
    last_message_at: null,
    ended_at: null,
  };
  await chat.insertSession("local", session);
  const message = {
    id: "msg_tx",
    session_id: "ses_tx",
    role: "user" as const,
    type: "text",
    content: "hello",
    sender: "user",
    receiver: agentA,
    metadata: {},
    thread_id: null,
    parent_id: null,
  };
  await failingWith(t.ctx.database, ["agent_sessions", "UPDATE"], () =>
    chat.appendMessage("local", message, Date.now()),
  );
  expect(await rows(t.ctx.database, "agent_messages", "session_id = ?", ["ses_tx"])).toBe(0);
  expect(await rows(t.ctx.database, "agent_sessions", "id = ? AND message_count = 0", ["ses_tx"])).toBe(1);
  await chat.appendMessage("local", message, Date.now());
  expect(await rows(t.ctx.database, "agent_messages", "session_id = ?", ["ses_tx"])).toBe(1);
  expect(await rows(t.ctx.database, "agent_sessions", "id = ? AND message_count = 1", ["ses_tx"])).toBe(1);
});

test("the chat socket's reply frame arrives after both messages committed: a read at that moment finds them", async () => {
  const model = agentModel(t, (prompt) => `echo ${prompt}`);
  const { body: agent } = await t.json<{ id: string }>(
    "/v1/agents",
    postJson({ name: "Echo", role: "tester", model: model.id }),
  );
  const server = listen(t);
  try {
    const c = await chat(server.url, { target_id: agent.id, target_type: "agent" });
    const { session_id } = await c.next((f) => f.type === "connected");
    c.send({ type: "message", content: "ping", context: { stream: false } });
    // Read as the frame arrives (no await between the frame and the statement's start).
    const stored = await c
      .next((f) => f.type === "response")
      .then(() =>
        t.ctx.database.all<{ role: string; content: string }>(
          "SELECT role, content FROM agent_messages WHERE session_id = ? ORDER BY timestamp",
          [session_id],
        ),
      );
    expect(stored).toEqual([
      { role: "user", content: "ping" },
      { role: "assistant", content: "echo ping" },
    ]);
    c.close();
  } finally {
    await server.stop();
  }
});
