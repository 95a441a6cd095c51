/**
 * `rlm` through the official `openai` SDK against a live server: the last user message runs as a turn
 * (Python in the jail; the offline model runs the code in the message), the answer is the message and
 * the code and output stream as `reasoning_content`. With an Idempotency-Key the same request replays
 * the turn instead of running it twice, and a client that abandons the stream does not stop it.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, streamText } from "ai";
import OpenAI from "openai";
import { postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { turnsApp } from "../helpers/turns.ts";
import { waitFor } from "../helpers/wait.ts";

setDefaultTimeout(180_000);

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let client: OpenAI;
beforeAll(async () => {
  t = await turnsApp({
    edits: [
      ["sandbox_start_timeout_seconds = 25", "sandbox_start_timeout_seconds = 150"],
      ["preparation_timeout_seconds = 30", "preparation_timeout_seconds = 150"],
    ],
  });
  server = listen(t);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "local", maxRetries: 0, timeout: 170_000 });
});
afterAll(async () => {
  await server.stop();
  await t.close();
});

const python = (code: string) => [{ role: "user" as const, content: `\`\`\`python\n${code}\n\`\`\`` }];
type WithReasoning = { reasoning_content?: string; content?: string | null };

test("rlm runs the message as a turn: the answer is the message, code and output are reasoning", async () => {
  const done = await client.chat.completions.create({ model: "rlm", messages: python("print(6 * 7)") });
  const message = done.choices[0]?.message as WithReasoning | undefined;
  expect(message?.reasoning_content).toContain("print(6 * 7)");
  expect(message?.reasoning_content).toContain("42");
  const stream = await client.chat.completions.create({
    model: "rlm",
    messages: python("print(7 * 8)"),
    stream: true,
  });
  let reasoning = "";
  let content = "";
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta as WithReasoning | undefined;
    reasoning += delta?.reasoning_content ?? "";
    content += delta?.content ?? "";
  }
  expect(reasoning).toContain("56");
  expect(typeof content).toBe("string");
});

test("an Idempotency-Key replays the turn; abandoned midway, the turn still completes and replays", async () => {
  const key = `k-${crypto.randomUUID()}`;
  const turnsIn = async () => {
    const sessions = await t.json<{ items: { id: string; title: string }[] }>("/api/sessions?limit=200");
    const mine = sessions.body.items.filter((s) => s.title === "OpenAI rlm");
    const counts = await Promise.all(
      mine.map(
        async (s) => (await t.json<{ items: unknown[] }>(`/api/sessions/${s.id}/turns`)).body.items.length,
      ),
    );
    return counts.reduce((a, b) => a + b, 0);
  };
  const before = await turnsIn();
  // Abandon the stream as soon as it starts: the turn keeps running (durable), under the key.
  const abort = new AbortController();
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({
      model: "rlm",
      messages: python("import time\ntime.sleep(1)\nprint('slow', 40 + 2)"),
      stream: true,
    }),
    signal: abort.signal,
  });
  await (response.body as ReadableStream<Uint8Array>).getReader().read();
  abort.abort();
  await waitFor(async () => (await turnsIn()) === before + 1, {
    timeoutMs: 120_000,
    intervalMs: 200,
    what: "the turn to complete",
  });
  // The same request again: replayed from the record, no second turn.
  const replay = await client.chat.completions.create(
    { model: "rlm", messages: python("import time\ntime.sleep(1)\nprint('slow', 40 + 2)") },
    { headers: { "idempotency-key": key } },
  );
  expect((replay.choices[0]?.message as WithReasoning | undefined)?.reasoning_content).toContain("slow 42");
  expect(await turnsIn()).toBe(before + 1);
});

test("a keyed retry replays after hundreds of newer sessions: the run is found by its key", async () => {
  const key = `k-${crypto.randomUUID()}`;
  const ask = async () => {
    const reply = await client.chat.completions.create(
      { model: "rlm", messages: python("import time\nprint('at', time.time_ns())") },
      { headers: { "idempotency-key": key } },
    );
    return (reply.choices[0]?.message as WithReasoning | undefined)?.reasoning_content?.match(/at \d+/)?.[0];
  };
  const first = await ask();
  expect(first).toMatch(/^at \d+$/);
  // More sessions than any listing's page: the keyed turn's session is no longer among the recent ones.
  for (let i = 0; i < 210; i++)
    expect((await t.request("/api/sessions", postJson({ title: `other ${i}` }))).ok).toBe(true);
  // Replayed from the record (the same output), not run again (a new time).
  expect(await ask()).toBe(first);
  // The turns family's lookup by key refuses an empty key.
  expect((await t.request("/api/runs?idempotency_key=")).status).toBe(422);
});

test("the AI SDK's openai-compatible provider runs rlm: generateText's answer, streamText's reasoning", async () => {
  const atrium = createOpenAICompatible({ name: "atrium", baseURL: `${server.url}/v1`, apiKey: "local" });
  const generated = await generateText({
    model: atrium.chatModel("rlm"),
    prompt: "```python\nprint(3 * 3)\n```",
    maxRetries: 0,
  });
  expect(generated.reasoningText).toContain("9");
  const streamed = streamText({
    model: atrium.chatModel("rlm"),
    prompt: "```python\nprint(4 * 4)\n```",
    maxRetries: 0,
  });
  let reasoning = "";
  for await (const part of streamed.fullStream) if (part.type === "reasoning-delta") reasoning += part.text;
  expect(reasoning).toContain("16");
});

test("without an Idempotency-Key, a client that abandons the stream cancels the turn", async () => {
  const abort = new AbortController();
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "rlm",
      messages: python("import time\ntime.sleep(30)\nprint('never')"),
      stream: true,
    }),
    signal: abort.signal,
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let seen = "";
  while (!seen.includes("time.sleep(30)")) seen += new TextDecoder().decode((await reader.read()).value);
  abort.abort();
  const status = await waitFor(
    async () => {
      const sessions = await t.json<{ items: { id: string; title: string }[] }>("/api/sessions?limit=200");
      for (const s of sessions.body.items.filter((x) => x.title === "OpenAI rlm")) {
        const turns = await t.json<{ items: { status: string; text?: string }[] }>(
          `/api/sessions/${s.id}/turns`,
        );
        const record = turns.body.items.find((r) => JSON.stringify(r).includes("time.sleep(30)"));
        if (record) return record.status;
      }
      return undefined;
    },
    { timeoutMs: 25_000, intervalMs: 200, what: "the abandoned turn's record" },
  );
  expect(status).toBe("cancelled");
});
