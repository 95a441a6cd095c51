/**
 * `POST /v1/chat/messages`: one message to an agent or fleet over plain HTTP, with a scripted model. A
 * new session or a continued one, stored in the session's history as the socket's; the socket's
 * refusals as HTTP errors in the family's envelope (404 unknown or another owner's target or session,
 * 409 a target that does not match the session, 422 bad input), each changing nothing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sseFrames } from "../../server/mcp/http.ts";
import { agentModel, as, type Frame } from "../helpers/agents.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { twoUsers, USER_HEADER } from "../helpers/users.ts";

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

test("Accept: text/event-stream streams the frames as they come, each member named, then the reply", async () => {
  const ann = as(t, "ann");
  const a = agentModel(t, () => "first draft here");
  const b = agentModel(t, (prompt) => `improved: ${prompt.includes("first draft here")}`);
  const ids: string[] = [];
  for (const [name, model] of [
    ["Drafter", a.id],
    ["Editor", b.id],
  ])
    ids.push((await ann.post("/v1/agents", { name, role: "r", model })).body.id);
  const fleet = (
    await ann.post("/v1/fleets", {
      name: "Pair",
      type: "RESEARCH",
      agent_ids: ids,
      coordination_pattern: "sequential",
    })
  ).body;
  const ask = (body: Record<string, unknown>, user = "ann") =>
    t.request("/v1/chat/messages", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", [USER_HEADER]: user },
      body: JSON.stringify(body),
    });
  const response = await ask({ target_id: fleet.id, target_type: "fleet", content: "write it" });
  expect(response.headers.get("content-type")).toStartWith("text/event-stream");
  const frames: { event?: string; data: Frame }[] = [];
  for await (const frame of sseFrames(response.body as ReadableStream<Uint8Array>))
    frames.push(frame as { event?: string; data: Frame });
  const chunks = frames.filter((f) => f.event === "stream");
  const speakers = chunks.map((f) => f.data.metadata.agent_name);
  expect(speakers.indexOf("Editor")).toBeGreaterThan(speakers.lastIndexOf("Drafter"));
  expect(
    chunks
      .filter((f) => f.data.metadata.agent_name === "Drafter")
      .map((f) => f.data.chunk)
      .join(""),
  ).toBe("first draft here");
  const reply = frames.at(-1);
  expect(reply?.event).toBe("reply");
  expect(reply?.data).toMatchObject({
    content: "improved: true",
    session_id: expect.stringMatching(/^chat_/),
  });
  expect(reply?.data.agents.map((x: { agent_name: string }) => x.agent_name)).toEqual(["Drafter", "Editor"]);
  // Refusals before any work are the HTTP errors of the JSON form; another user's fleet is not found.
  expect((await ask({ target_id: fleet.id, target_type: "fleet", content: "x" }, "bob")).status).toBe(404);
  expect((await ask({ target_id: "flt_nope", target_type: "fleet", content: "x" })).status).toBe(404);
  a.dispose();
  b.dispose();
});
