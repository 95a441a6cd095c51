/**
 * The policy's model over the wire: with the base URL variable set, a bare `model.id` is a model of that
 * OpenAI-compatible endpoint, called with the key variable; a turn runs its Python and SUBMITs.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { TestApp } from "../helpers/app.ts";
import { createSession, runTurn, turnsApp } from "../helpers/turns.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine, so these tests get more time.
setDefaultTimeout(120_000);

const seen: { authorization: string | null; model: string }[] = [];
const replies = [
  "I will compute.\n```python\nx = 6 * 7\nprint(x)\n```",
  "```python\nSUBMIT(answer=f'wired {x}')\n```",
];
let calls = 0;
const wire = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const body = (await request.json()) as { model: string };
    seen.push({ authorization: request.headers.get("authorization"), model: body.model });
    const content = replies[calls++] ?? "done";
    const frame = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    return new Response(`${frame({ role: "assistant", content })}${frame({}, "stop")}data: [DONE]\n\n`, {
      headers: { "content-type": "text/event-stream" },
    });
  },
});

let t: TestApp;
beforeAll(async () => {
  t = await turnsApp({
    env: { APP_MODEL_BASE_URL: `http://127.0.0.1:${wire.port}/v1`, APP_MODEL_API_KEY: "sk-wire-key" },
    edits: [['id = ""', 'id = "local-model"']],
  });
});
afterAll(async () => {
  await t.close();
  wire.stop(true);
});

test("a bare model id is served by the policy's OpenAI-compatible endpoint", async () => {
  const session = await createSession(t);
  const { events } = await runTurn(t, session, { text: "What is 6 times 7?" });
  expect(events.find((e) => e.type === "reasoning")?.text).toBe("I will compute.");
  expect(events.find((e) => e.type === "output" && !e.isDelta)?.output).toBe("42\n");
  expect(events.find((e) => e.type === "text")?.text).toBe("wired 42");
  expect(seen).toEqual([
    { authorization: "Bearer sk-wire-key", model: "local-model" },
    { authorization: "Bearer sk-wire-key", model: "local-model" },
  ]);
});
