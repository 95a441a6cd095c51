/** A model from the owner's pi models.json (an OpenAI-compatible local server) is listed and streams through pi. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { type Event, lines } from "../helpers/streams.ts";

const seen: { authorization: string | null; model: string }[] = [];
const chunk = (delta: object, finish: string | null = null) => ({
  id: "c1",
  object: "chat.completion.chunk",
  created: 1,
  model: "local-model",
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const body = (await request.json()) as { model: string };
    seen.push({ authorization: request.headers.get("authorization"), model: body.model });
    const frames = [
      chunk({ role: "assistant", content: "Hello from " }),
      chunk({ content: "models.json" }),
      chunk({}, "stop"),
    ];
    const text = `${frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join("")}data: [DONE]\n\n`;
    return new Response(text, { headers: { "content-type": "text/event-stream" } });
  },
});

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  const agentDir = `${t.dataDir}/pi-agent/local`;
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(
    `${agentDir}/models.json`,
    JSON.stringify({
      providers: {
        localai: {
          baseUrl: `http://127.0.0.1:${server.port}/v1`,
          api: "openai-completions",
          apiKey: "local-key",
          compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
          models: [{ id: "local-model", name: "Local model" }],
        },
      },
    }),
  );
});
afterAll(async () => {
  await t.close();
  server.stop(true);
});

test("listed in /api/chat/models and used by a chat turn with its own key", async () => {
  const models = await t.json<{ models: Event[] }>("/api/chat/models");
  expect(models.body.models.find((m) => m.key === "localai/local-model")).toMatchObject({
    provider: "localai",
    name: "Local model",
  });
  const events = await lines(
    await t.request("/api/chat", postJson({ message: "hi", model: "localai/local-model" })),
  );
  expect(
    events
      .filter((e) => e.type === "delta")
      .map((e) => e.text)
      .join(""),
  ).toBe("Hello from models.json");
  expect(events.at(-1)?.type).toBe("done");
  expect(seen.at(-1)).toEqual({ authorization: "Bearer local-key", model: "local-model" });
  // A model the file does not define is still a 400.
  expect((await t.request("/api/chat", postJson({ message: "hi", model: "localai/other" }))).status).toBe(
    400,
  );
});
