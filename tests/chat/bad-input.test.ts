/** Bad input to the chat routes: a clear 400 in the chat envelope before any stream, and nothing created. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { chat } from "../helpers/chat.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

// Through the database port: the engine the app runs on (app.db, or PostgreSQL with ATRIUM_TEST_DATABASE).
const count = async (table: string) =>
  (await t.ctx.database.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))?.n;
const sessionRows = () => count("chat_sessions");
const runRows = () => count("chat_runs");
const sessionFiles = () => {
  try {
    return readdirSync(`${t.dataDir}/sessions`, { recursive: true }).length;
  } catch {
    return 0;
  }
};

const BAD: [string, unknown][] = [
  ["empty message without planAction", { message: "   " }],
  ["no message at all", {}],
  ["unknown mode", { message: "hi", mode: "yolo" }],
  ["malformed model string", { message: "hi", model: "not a model" }],
  ["model string without a model part", { message: "hi", model: "openai/" }],
  ["unknown provider", { message: "hi", model: "nosuch/model" }],
  [
    "model object with a bad thinking level",
    { message: "hi", model: { provider: "openai", id: "gpt-5-mini", thinkingLevel: "ultra" } },
  ],
  ["sessionFile traversal", { message: "hi", sessionFile: "../../app.db" }],
  ["sessionFile in another owner's folder", { message: "hi", sessionFile: `${"/x"}/sessions/bob/s.jsonl` }],
  ["sessionFile that is not a session file", { message: "hi", sessionFile: "notes.txt" }],
  ["unknown planAction", { message: "hi", planAction: "launch" }],
  ["unknown streamingBehavior", { message: "hi", streamingBehavior: "interrupt" }],
  ["message of the wrong type", { message: 42 }],
];

test.each(BAD)("%s → 400 {message, errors} and nothing created", async (_name, body) => {
  const before = { sessions: await sessionRows(), runs: await runRows(), files: sessionFiles() };
  const response = await chat(t, body);
  expect(response.status).toBe(400);
  expect(response.headers.get("content-type")).toContain("application/json");
  const error = (await response.json()) as { message: string; errors?: unknown[] };
  expect(error.message).toStartWith("Invalid request");
  expect(Array.isArray(error.errors)).toBe(true);
  expect({ sessions: await sessionRows(), runs: await runRows(), files: sessionFiles() }).toEqual(before);
});

test("a traversal in another owner's absolute folder is refused too", async () => {
  const response = await chat(t, { message: "hi", sessionFile: `${t.dataDir}/sessions/bob/x.jsonl` });
  expect(response.status).toBe(400);
  expect(await sessionRows()).toBe(0);
});

test("malformed JSON is a 400", async () => {
  const response = await t.request("/api/chat", postJson("{nope"));
  expect(response.status).toBe(400);
  expect(((await response.json()) as { message: string }).message).toContain("could not be parsed");
});

test("bad input to the other chat routes is a 400, unknown targets 404", async () => {
  const question = await t.request(
    "/api/chat/question",
    postJson({ sessionId: "s", toolCallId: "c", answer: { kind: "maybe" } }),
  );
  expect(question.status).toBe(400);
  const missing = await t.json(
    "/api/chat/question",
    postJson({ sessionId: "s", toolCallId: "c", answer: { kind: "skip" } }),
  );
  expect(missing).toMatchObject({ status: 404, body: { ok: false } });
  expect((await t.request("/api/chat/runs")).status).toBe(400);
  expect((await t.request("/api/chat/runs?sessionId=s&limit=500")).status).toBe(400);
  expect((await t.request("/api/chat/provenance?runId=nope")).status).toBe(404);
  expect(
    (await t.request("/api/chat/settings", postJson({ settings: { retry: { maxRetries: "three" } } })))
      .status,
  ).toBe(400);
  expect((await t.request("/api/chat/settings", postJson({ settings: { colour: "blue" } }))).status).toBe(
    400,
  );
  expect((await t.request("/api/chat/providers", postJson({ provider: "nosuch", apiKey: "k" }))).status).toBe(
    400,
  );
  expect((await t.request("/api/chat/models/discover?provider=nosuch")).status).toBe(400);
  expect((await t.request("/api/chat/session?sessionFile=../../app.db")).status).toBe(400);
  expect((await t.request("/api/attach", postJson({}))).status).toBe(400);
  expect((await t.request("/api/attach", postJson({ sessionId: "nope" }))).status).toBe(404);
  expect(await sessionRows()).toBe(0);
});

test("provider ids and settings updates are enforced by their schemas, in the chat envelope", async () => {
  type Refusal = { message: string; errors: { loc: unknown[]; type: string; msg: string }[] };
  const ids =
    '"amazon-bedrock", "openai", "anthropic", "google-vertex", "google", "mistral", "groq" or "ollama"';
  const stored = await t.json<Refusal>("/api/chat/providers", postJson({ provider: "nosuch", apiKey: "k" }));
  expect(stored).toMatchObject({
    status: 400,
    body: {
      message: `Invalid request: body.provider: Input should be ${ids}`,
      errors: [{ loc: ["body", "provider"], type: "enum" }],
    },
  });
  const discovered = await t.json<Refusal>("/api/chat/models/discover?provider=nosuch");
  expect(discovered).toMatchObject({
    status: 400,
    body: { errors: [{ loc: ["query", "provider"], type: "enum" }] },
  });
  // Keys validation does not know are dropped before the check: an update naming none changes nothing.
  for (const settings of [{}, { colour: "blue" }]) {
    const refused = await t.json<Refusal>("/api/chat/settings", postJson({ settings }));
    expect(refused).toEqual({
      status: 400,
      headers: expect.anything(),
      body: {
        message: "Invalid request: body.settings: no known setting in the update",
        errors: [{ loc: ["body", "settings"], msg: "no known setting in the update", type: "value_error" }],
      },
    });
  }
  // The same schemas let the valid forms through.
  expect((await t.request("/api/chat/providers", postJson({ provider: "groq", apiKey: null }))).status).toBe(
    200,
  );
  expect((await t.request("/api/chat/settings", postJson({ settings: { transport: "sse" } }))).status).toBe(
    200,
  );
});
