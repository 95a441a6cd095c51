/**
 * The real provider wire path: pi-ai's OpenAI chat-completions adapter against a local Bun server that
 * speaks the protocol (SSE chunks, tool-call deltas, usage, [DONE]), reached through ModelService both as
 * the catalog's Ollama provider and as a registered OpenAI-compatible model with a key.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Api, AssistantMessageEvent, Model } from "@mariozechner/pi-ai";
import { createEnvSource } from "../../server/config/env.ts";
import { ModelService } from "../../server/models/service.ts";

interface Seen {
  path: string;
  authorization: string | null;
  body: { model: string; stream: boolean; messages: { role: string; content: unknown }[] };
}
const seen: Seen[] = [];

function chunk(delta: object, finish: string | null = null) {
  return {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

let server: ReturnType<typeof Bun.serve>;
beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const body = (await request.json()) as Seen["body"];
      seen.push({ path: url.pathname, authorization: request.headers.get("authorization"), body });
      if (request.headers.get("authorization") === "Bearer wrong-key") {
        return Response.json(
          { error: { message: "Incorrect API key provided", type: "invalid_request_error" } },
          { status: 401 },
        );
      }
      const wantsTool = JSON.stringify(body.messages).includes("use the tool");
      const frames = wantsTool
        ? [
            chunk({
              role: "assistant",
              tool_calls: [
                { index: 0, id: "call_1", type: "function", function: { name: "read", arguments: '{"pa' } },
              ],
            }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: 'th":"notes.md"}' } }] }),
            chunk({}, "tool_calls"),
          ]
        : [
            chunk({ role: "assistant", content: "Hel" }),
            chunk({ content: "lo from " }),
            chunk({ content: "the wire" }),
            chunk({}, "stop"),
          ];
      const usage = {
        id: "chatcmpl-1",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [],
        usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 },
      };
      const sse = `${[...frames, usage].map((f) => `data: ${JSON.stringify(f)}\n\n`).join("")}data: [DONE]\n\n`;
      return new Response(sse, { headers: { "content-type": "text/event-stream" } });
    },
  });
});
afterAll(() => server.stop(true));

const base = () => `http://127.0.0.1:${server.port}`;
const prompt = (text: string) => ({
  systemPrompt: "Be brief.",
  messages: [{ role: "user" as const, content: text, timestamp: 0 }],
  tools: [
    {
      name: "read",
      description: "Read a file",
      parameters: { type: "object", properties: { path: { type: "string" } } } as never,
    },
  ],
});

function gatewayModel(provider: string): Model<Api> {
  return {
    id: "gw-model",
    name: "Gateway model",
    api: "openai-completions",
    provider,
    baseUrl: `${base()}/v1`,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 32_000,
    maxTokens: 4_000,
  };
}

async function run(models: ModelService, model: Model<Api>, text: string) {
  const events: AssistantMessageEvent[] = [];
  for await (const event of models.stream(model, prompt(text))) events.push(event);
  return events;
}

test("the catalog's Ollama provider streams text over the OpenAI protocol", async () => {
  const models = new ModelService(createEnvSource({ OLLAMA_BASE_URL: base() }));
  expect(models.providers().find((p) => p.id === "ollama")?.configured).toBe(true);
  const events = await run(models, await models.resolve("ollama/llama3.2"), "say hello");
  const deltas = events.flatMap((e) => (e.type === "text_delta" ? [e.delta] : []));
  expect(deltas.join("")).toBe("Hello from the wire");
  expect(deltas.length).toBe(3);
  const done = events.at(-1);
  expect(done).toMatchObject({ type: "done", reason: "stop", message: { usage: { input: 11, output: 5 } } });

  const request = seen.at(-1)!;
  expect(request.path).toBe("/v1/chat/completions");
  expect(request.body.model).toBe("llama3.2");
  expect(request.body.stream).toBe(true);
  expect(request.body.messages.map((m) => m.role)).toEqual(["system", "user"]);
});

test("a registered OpenAI-compatible model sends its key and parses streamed tool calls", async () => {
  const models = new ModelService(createEnvSource({}));
  const id = models.register(gatewayModel("local-gateway"), { apiKey: "sk-local-123" });
  const events = await run(models, await models.resolve(id), "please use the tool");
  expect(seen.at(-1)!.authorization).toBe("Bearer sk-local-123");
  const end = events.find((e) => e.type === "toolcall_end");
  expect(end).toMatchObject({
    type: "toolcall_end",
    toolCall: { id: "call_1", name: "read", arguments: { path: "notes.md" } },
  });
  expect(events.at(-1)).toMatchObject({ type: "done", reason: "toolUse" });
});

test("a provider error ends the stream with an error event, never a hang", async () => {
  const models = new ModelService(createEnvSource({}));
  const id = models.register(gatewayModel("bad-gateway"), { apiKey: "wrong-key" });
  const events = await run(models, await models.resolve(id), "hello");
  const last = events.at(-1);
  expect(last?.type).toBe("error");
  if (last?.type === "error") expect(last.error.errorMessage).toContain("Incorrect API key provided");
});
