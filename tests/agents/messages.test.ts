/**
 * `POST /v1/chat/messages`: one message to an agent or fleet over plain HTTP, with a scripted model. A
 * new session or a continued one, stored in the session's history as the socket's; the socket's
 * refusals as HTTP errors in the family's envelope (404 unknown or another owner's target or session,
 * 409 a target that does not match the session, 422 bad input), each changing nothing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { agentModel, as } from "../helpers/agents.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { twoUsers } from "../helpers/users.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(twoUsers());
});
afterAll(() => t.close());

test("a message opens a session, the reply is JSON, the session continues and keeps the history", async () => {
  const ann = as(t, "ann");
  const model = agentModel(t, (prompt, n) => `reply ${n} to ${prompt}`);
  const agent = (await ann.post("/v1/agents", { name: "Helper", role: "helps", model: model.id })).body;
  const first = await ann.post("/v1/chat/messages", {
    target_id: agent.id,
    target_type: "agent",
    content: "first question",
  });
  expect(first.status).toBe(200);
  const session = first.body.session_id as string;
  expect(session).toStartWith("chat_");
  expect(first.body).toMatchObject({
    message_id: expect.any(String),
    content: "reply 1 to first question",
    agents: [expect.objectContaining({ agent_id: agent.id, agent_name: "Helper" })],
  });
  const second = await ann.post("/v1/chat/messages", {
    session_id: session,
    content: "second question",
  });
  expect(second).toMatchObject({ status: 200, body: { session_id: session } });
  expect(second.body.content).toContain("second question");
  const history = await ann.get(`/v1/chat/sessions/${session}/history`);
  const text = JSON.stringify(history.body);
  for (const part of ["first question", "reply 1 to first question", "second question"])
    expect(text).toContain(part);
});

test("refusals are the family's errors and change nothing", async () => {
  const ann = as(t, "ann");
  const bob = as(t, "bob");
  const agent = (await ann.post("/v1/agents", { name: "Ann's", role: "r" })).body;
  const other = (await ann.post("/v1/agents", { name: "Other", role: "r" })).body;
  const session = (
    await ann.post("/v1/chat/messages", { target_id: agent.id, target_type: "agent", content: "hi" })
  ).body.session_id as string;
  const before = (await ann.get("/v1/chat/sessions")).body.total;

  const cases: [ReturnType<typeof as>, Record<string, unknown>, number][] = [
    [ann, { target_id: "agt_nope", target_type: "agent", content: "x" }, 404],
    [bob, { target_id: agent.id, target_type: "agent", content: "x" }, 404],
    [bob, { session_id: session, content: "x" }, 404],
    [ann, { session_id: session, target_id: other.id, target_type: "agent", content: "x" }, 409],
    [ann, { content: "no target" }, 422],
    [ann, { target_id: agent.id, target_type: "robot", content: "x" }, 422],
    [ann, { target_id: agent.id, target_type: "agent", content: "   " }, 422],
    [ann, { target_id: agent.id, target_type: "agent" }, 422],
  ];
  for (const [user, body, status] of cases) {
    const response = await user.post("/v1/chat/messages", body);
    expect({ body, status: response.status }).toEqual({ body, status });
    expect(response.body.detail).toBeDefined();
  }
  expect((await ann.get("/v1/chat/sessions")).body.total).toBe(before);
  expect((await bob.get("/v1/chat/sessions")).body.total).toBe(0);
});
