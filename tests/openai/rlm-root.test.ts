/**
 * A turn's root model per request: `rlm/<provider/model>` through the official `openai` SDK against a
 * live server, and the turns API's `model` field under it. The chosen model is a scripted
 * OpenAI-compatible provider on a loopback port (tests/openai/helpers.ts): the turn's model calls must
 * reach it (and the offline model must not answer). A model the server has not configured is refused
 * (404 `model_not_found` on the OpenAI endpoint, 400 in the turns envelope), changing nothing; the model
 * is recorded on the run and bound to the Idempotency-Key with the rest of the request.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import OpenAI, { APIError } from "openai";
import type { TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { createSession, runTurn, turnRequest, turnsApp } from "../helpers/turns.ts";
import { type Upstream, upstreamProvider } from "./helpers.ts";

setDefaultTimeout(180_000);

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let client: OpenAI;
let upstream: Upstream;
beforeAll(async () => {
  t = await turnsApp({
    edits: [
      ["sandbox_start_timeout_seconds = 25", "sandbox_start_timeout_seconds = 150"],
      ["preparation_timeout_seconds = 30", "preparation_timeout_seconds = 150"],
    ],
  });
  upstream = upstreamProvider(t);
  server = listen(t);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "local", maxRetries: 0, timeout: 170_000 });
});
afterAll(async () => {
  upstream.stop();
  await server.stop();
  await t.close();
});

type WithReasoning = { reasoning_content?: string; content?: string | null };
type Runs = { items: { runId: string; sessionId: string; status: string; model: string | null }[] };

/** The user text of each request the scripted provider received. */
const userTexts = (from: number) =>
  upstream.requests.slice(from).map((r) => JSON.stringify((r.messages as unknown[]).at(-1)));

test("rlm/<provider/model>: the turn's root model calls go to that model", async () => {
  const from = upstream.requests.length;
  // Step 1 writes Python (run in the jail), step 2 answers: two calls to the chosen model.
  upstream.replies.push({ text: "```python\nprint(6 * 7)\n```" }, { text: "The scripted root says 42" });
  const done = await client.chat.completions.create({
    model: "rlm/scripted-up/model",
    messages: [{ role: "user", content: "What is six times seven?" }],
  });
  const message = done.choices[0]?.message as WithReasoning | undefined;
  expect(message?.content).toBe("The scripted root says 42");
  expect(message?.reasoning_content).toContain("print(6 * 7)");
  expect(message?.reasoning_content).toContain("42");
  expect(done.model).toBe("rlm/scripted-up/model");
  const calls = upstream.requests.slice(from);
  expect(calls).toHaveLength(2);
  expect(calls.every((r) => r.model === "model")).toBe(true);
  expect(userTexts(from)[0]).toContain("What is six times seven?");
  // The second call carries the first step's output back to the model.
  expect(JSON.stringify(calls[1])).toContain("42");

  // Streamed too: the answer as content, from the scripted model.
  upstream.replies.push({ text: "Streamed from the scripted root" });
  const stream = await client.chat.completions.create({
    model: "rlm/scripted-up/model",
    messages: [{ role: "user", content: "Say something" }],
    stream: true,
  });
  let content = "";
  for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? "";
  expect(content).toBe("Streamed from the scripted root");
  expect(upstream.requests.length).toBe(from + 3);
});

test("rlm/<model> of a provider this server has not configured, or unknown: 404 model_not_found", async () => {
  const sessionsBefore = (await t.json<{ total: number }>("/api/sessions")).body.total;
  const from = upstream.requests.length;
  for (const model of ["rlm/openai/gpt-4o-mini", "rlm/nobody/nothing", "rlm/scripted-up/other"]) {
    const error = await client.chat.completions
      .create({ model, messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(404);
    expect((error as APIError).code).toBe("model_not_found");
  }
  // Refused before anything ran: no session opened, no model called.
  expect((await t.json<{ total: number }>("/api/sessions")).body.total).toBe(sessionsBefore);
  expect(upstream.requests.length).toBe(from);
});

test("the turns API's model: accepted, recorded on the run, bound to the Idempotency-Key", async () => {
  const session = await createSession(t, "root model");
  const key = `root-${crypto.randomUUID()}`;
  const from = upstream.requests.length;
  upstream.replies.push({ text: "Answered by the scripted root" });
  const body = { text: "Who answers?", model: "scripted-up/model" };
  const first = await runTurn(t, session, body, key);
  expect(first.response.status).toBe(200);
  const text = first.events.find((e) => e.type === "text" && e.final);
  expect(text?.text).toBe("Answered by the scripted root");
  expect(first.events.at(-1)?.status).toBe("completed");
  expect(upstream.requests.length).toBe(from + 1);

  const runs = await t.json<Runs>(`/api/runs?idempotency_key=${key}`);
  expect(runs.body.items).toHaveLength(1);
  expect(runs.body.items[0]?.model).toBe("scripted-up/model");

  // The same key and body: replayed, the model not called again.
  const replay = await runTurn(t, session, body, key);
  expect(replay.events.find((e) => e.type === "turn_start")?.delivery).toBe("replay");
  expect(replay.events.find((e) => e.type === "text" && e.final)?.text).toBe("Answered by the scripted root");
  expect(upstream.requests.length).toBe(from + 1);

  // The same key under another model (or none): the conflict of a changed request.
  for (const other of [{ ...body, model: "offline/offline" }, { text: body.text }]) {
    const changed = await runTurn(t, session, other, key);
    expect(changed.events.find((e) => e.type === "turn_error")?.code).toBe("idempotency_key_mismatch");
  }
  expect((await t.json<Runs>(`/api/runs?idempotency_key=${key}`)).body.items).toHaveLength(1);
  expect(upstream.requests.length).toBe(from + 1);

  // A turn naming no model records none and runs on the policy's (offline here: no scripted call).
  const plainKey = `plain-${crypto.randomUUID()}`;
  const plain = await runTurn(t, session, { text: "```python\nprint(1 + 1)\n```" }, plainKey);
  expect(plain.events.at(-1)?.status).toBe("completed");
  expect((await t.json<Runs>(`/api/runs?idempotency_key=${plainKey}`)).body.items[0]?.model).toBeNull();
  expect(upstream.requests.length).toBe(from + 1);
});

test("the turns API refuses a bad or unconfigured model with a 400, running nothing", async () => {
  const session = await createSession(t, "bad models");
  const from = upstream.requests.length;
  const cases: [unknown, string][] = [
    ["openai/gpt-4o-mini", "model_not_allowed"],
    ["nobody/nothing", "model_not_allowed"],
    ["scripted-up/other", "model_not_allowed"],
    ["no-slash", "invalid_model"],
    ["/model", "invalid_model"],
    ["scripted-up/", "invalid_model"],
    ["with space/model x", "invalid_model"],
    [`p/${"m".repeat(300)}`, "invalid_model"],
    [42, "invalid_model"],
    [null, "invalid_model"],
  ];
  for (const [model, code] of cases) {
    const key = `bad-${crypto.randomUUID()}`;
    const response = await t.request(
      `/api/sessions/${session}/turns`,
      turnRequest({ text: "hi", model }, key),
    );
    expect({ model, status: response.status }).toEqual({ model, status: 400 });
    const error = (await response.json()) as { error: { code: string; message: string } };
    expect({ model, code: error.error.code }).toEqual({ model, code });
    expect(error.error.message.length).toBeGreaterThan(0);
    expect((await t.json<Runs>(`/api/runs?idempotency_key=${key}`)).body.items).toHaveLength(0);
  }
  expect((await t.json<{ items: unknown[] }>(`/api/sessions/${session}/turns`)).body.items).toHaveLength(0);
  expect(upstream.requests.length).toBe(from);
});
