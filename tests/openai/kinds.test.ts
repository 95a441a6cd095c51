/**
 * The model kinds other than provider models, through the official `openai` SDK against a live server:
 * `agent/<name-or-id>` and `fleet/<name>` (the conversation goes to the agent or fleet, the reply is the
 * message, the history is in the target's chat sessions), `search/<index>` and `search/<index>/global`
 * (the answer with the context tables in `context_data`), and ids with path tricks, which name nothing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import OpenAI from "openai";
import { agentModel } from "../helpers/agents.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let client: OpenAI;

beforeAll(async () => {
  t = await createTestApp();
  server = listen(t);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "local", maxRetries: 0 });
  const text = "Ada Lovelace met Charles Babbage in London. Ada Lovelace wrote to Charles Babbage often.";
  expect(
    (await t.request("/search/index", postJson({ documents: [{ name: "ada.txt", text }] }))).status,
  ).toBe(200);
});
afterAll(async () => {
  await server.stop();
  await t.close();
});

const user = (content: string) => [{ role: "user" as const, content }];

test("agent/<name> and agent/<id>: the agent answers, and the exchange is in its chat sessions", async () => {
  const model = agentModel(t, (prompt) => `Helper says: ${prompt.slice(-20)}`);
  const created = await t.json<{ id: string }>(
    "/v1/agents",
    postJson({ name: "helper", role: "assistant", model: model.id }),
  );
  const ids = (await client.models.list()).data.map((m) => m.id);
  expect(ids).toContain("agent/helper");
  const reply = await client.chat.completions.create({
    model: "agent/helper",
    messages: user("what is two plus two"),
  });
  expect(reply.choices[0]?.message.content).toContain("Helper says:");
  expect(model.calls.at(-1)?.prompt).toContain("what is two plus two");
  const streamed = await client.chat.completions.create({
    model: `agent/${created.body.id}`,
    messages: user("and three"),
    stream: true,
  });
  let text = "";
  for await (const chunk of streamed) text += chunk.choices[0]?.delta.content ?? "";
  expect(text).toContain("Helper says:");
  const sessions = await t.json<{ sessions: { session_id: string }[] }>(
    `/v1/chat/sessions?target_id=${created.body.id}&target_type=agent`,
  );
  expect(sessions.body.sessions.length).toBe(2);
  const history = await t.json<{ messages: { type: string; content: string }[] }>(
    `/v1/chat/sessions/${sessions.body.sessions[0]?.session_id}/history`,
  );
  expect(JSON.stringify(history.body)).toContain("Helper says:");
  model.dispose();
});

test("fleet/<name>: the fleet's pattern runs and its final answer is the message", async () => {
  const a = agentModel(t, () => "From A: facts.");
  const b = agentModel(t, () => "From B: summary.");
  const first = await t.json<{ id: string }>(
    "/v1/agents",
    postJson({ name: "fa", role: "researcher", model: a.id }),
  );
  const second = await t.json<{ id: string }>(
    "/v1/agents",
    postJson({ name: "fb", role: "writer", model: b.id }),
  );
  const fleet = await t.json<{ id: string }>(
    "/v1/fleets",
    postJson({ name: "team", type: "RESEARCH", agent_ids: [first.body.id, second.body.id] }),
  );
  expect(fleet.status).toBe(200);
  const reply = await client.chat.completions.create({
    model: "fleet/team",
    messages: user("research this"),
  });
  expect(reply.choices[0]?.message.content).toMatch(/From [AB]/);
  expect(a.calls.length + b.calls.length).toBeGreaterThanOrEqual(2);
  const sessions = await t.json<{ sessions: unknown[] }>(
    `/v1/chat/sessions?target_id=${fleet.body.id}&target_type=fleet`,
  );
  expect(sessions.body.sessions.length).toBe(1);
});

test("fleet/<name> streaming: each member's contribution streams as reasoning, in order, before the synthesis", async () => {
  const a = agentModel(t, () => "Alpha found three facts.");
  const b = agentModel(t, () => "Beta wrote the final summary.");
  const ids: string[] = [];
  for (const [name, model] of [
    ["sa", a.id],
    ["sb", b.id],
  ] as const) {
    const created = await t.json<{ id: string }>("/v1/agents", postJson({ name, role: "worker", model }));
    ids.push(created.body.id);
  }
  const fleet = await t.json<{ id: string }>(
    "/v1/fleets",
    postJson({ name: "relay", type: "RESEARCH", agent_ids: ids, coordination_pattern: "sequential" }),
  );
  expect(fleet.status).toBe(200);
  const stream = await client.chat.completions.create({
    model: "fleet/relay",
    messages: user("work on this"),
    stream: true,
  });
  const deltas: { kind: "reasoning" | "content"; text: string }[] = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta as
      | { content?: string | null; reasoning_content?: string }
      | undefined;
    if (delta?.reasoning_content) deltas.push({ kind: "reasoning", text: delta.reasoning_content });
    if (delta?.content) deltas.push({ kind: "content", text: delta.content });
  }
  const firstContent = deltas.findIndex((d) => d.kind === "content");
  const reasoning = deltas.slice(0, firstContent).map((d) => d.text);
  // Every contribution came before the answer, as several deltas (streamed, not one block at the end).
  expect(deltas.slice(0, firstContent).every((d) => d.kind === "reasoning")).toBe(true);
  expect(reasoning.length).toBeGreaterThan(4);
  const transcript = reasoning.join("");
  expect(transcript).toMatch(/^\[sa · \w+\]\nAlpha found three facts\.\n\n\[sb · \w+\]\nBeta wrote/);
  expect(transcript.indexOf("Alpha found")).toBeLessThan(transcript.indexOf("Beta wrote"));
  // The synthesis (the sequential pattern's last output) is the message.
  const content = deltas.slice(firstContent).map((d) => d.text);
  expect(content.join("")).toBe("Beta wrote the final summary.");
  expect(b.calls.at(-1)?.prompt).toContain("Alpha found three facts.");
  a.dispose();
  b.dispose();
});

test("search/<index> and search/<index>/global answer with the context tables in context_data", async () => {
  const ids = (await client.models.list()).data.map((m) => m.id);
  expect(ids).toEqual(expect.arrayContaining(["search/default", "search/default/global"]));
  for (const model of ["search/default", "search/default/global"]) {
    const reply = await client.chat.completions.create({
      model,
      messages: user("Who did Ada Lovelace meet?"),
    });
    const message = reply.choices[0]?.message as OpenAI.ChatCompletionMessage & {
      context_data?: Record<string, unknown[]>;
    };
    expect(message.content?.length).toBeGreaterThan(0);
    expect(message.context_data && Object.keys(message.context_data).length).toBeGreaterThan(0);
  }
  const missing = await client.chat.completions
    .create({ model: "search/nope", messages: user("x") })
    .catch((e) => e);
  expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
});

test("model ids with path tricks name nothing: model_not_found, never another route", async () => {
  for (const model of [
    "agent/../../api/sessions",
    "agent/%2e%2e",
    "search/../default",
    "search/default/../../v1/agents",
    "fleet/\u0000",
    "agent/x\nINJECT",
    "a".repeat(5000),
  ]) {
    const refused = await client.chat.completions.create({ model, messages: user("x") }).catch((e) => e);
    expect({ model: model.slice(0, 40), status: refused.status }).toEqual({
      model: model.slice(0, 40),
      status: 404,
    });
  }
  const viaPath = await fetch(`${server.url}/v1/models/agent%2F..%2F..%2Fapi%2Fsessions`);
  expect(viaPath.status).toBe(404);
  expect(((await viaPath.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
});
