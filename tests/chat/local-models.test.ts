/**
 * Models are honest: the default a catalog reports is one that exists (Ollama's is one it has pulled), a
 * local server that refuses the connection fails the turn at once naming it and its URL (no retries),
 * and the offline reply's instructions work as written.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { createEnvSource } from "../../server/config/env.ts";
import { isLocalEndpoint } from "../../server/models/local.ts";
import { ModelService } from "../../server/models/service.ts";
import { createTestApp, postJson } from "../helpers/app.ts";
import { chat } from "../helpers/chat.ts";
import { type Event, lines } from "../helpers/streams.ts";

/** A local server speaking Ollama's /api/tags and the OpenAI-compatible chat route it serves under /v1. */
const requested: string[] = [];
const ollama = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === "/api/tags")
      return Response.json({ models: [{ name: "qwen3:4b" }, { name: "mistral:7b" }] });
    if (path !== "/v1/chat/completions") return new Response("no", { status: 404 });
    const body = (await request.json()) as { model: string };
    requested.push(body.model);
    const frame = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const text = `${frame({ role: "assistant", content: `Hi from ${body.model}` })}${frame({}, "stop")}data: [DONE]\n\n`;
    return new Response(text, { headers: { "content-type": "text/event-stream" } });
  },
});

/** A port nothing listens on (a server was there a moment ago). */
function closedPort(): number {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = server.port as number;
  server.stop(true);
  return port;
}

afterAll(() => {
  ollama.stop(true);
});

test("with OLLAMA_BASE_URL set, the default is a model Ollama has pulled, and a turn uses it", async () => {
  const t = await createTestApp({ env: { OLLAMA_BASE_URL: `http://127.0.0.1:${ollama.port}` } });
  try {
    const { status, body } = await t.json<Event>("/api/chat/models");
    expect(status).toBe(200);
    // Not the catalog's llama3.2, which this Ollama does not have.
    expect(body.selectedModelKey).toBe("ollama/qwen3:4b");
    expect(body).toMatchObject({ defaultProvider: "ollama", defaultModel: "qwen3:4b", diagnostics: [] });
    const listed = body.models.find((m: Event) => m.key === body.selectedModelKey);
    expect(listed).toMatchObject({ provider: "ollama", id: "qwen3:4b", available: true });

    const events = await lines(await chat(t, { message: "hello" }));
    expect(events.at(-1)?.type).toBe("done");
    expect(requested.at(-1)).toBe("qwen3:4b");

    // A default from settings that Ollama has not pulled is reported and not used.
    await t.json(
      "/api/chat/settings",
      postJson({ settings: { defaultProvider: "ollama", defaultModel: "llama3.2" } }),
    );
    const after = await t.json<Event>("/api/chat/models");
    expect(after.body.selectedModelKey).toBe("ollama/qwen3:4b");
    expect(after.body.diagnostics.join("\n")).toContain("Ollama has not pulled 'llama3.2'");
  } finally {
    await t.close();
  }
});

test("Ollama refusing the connection fails the turn at once, naming Ollama and its URL (no retries)", async () => {
  const url = `http://127.0.0.1:${closedPort()}`;
  const t = await createTestApp({ env: { OLLAMA_BASE_URL: url } });
  try {
    const models = await t.json<Event>("/api/chat/models");
    expect(models.body.diagnostics.join("\n")).toContain(`Ollama is unreachable at ${url}`);
    const events = await lines(await chat(t, { message: "hello" }));
    expect(events.map((e) => e.type)).toEqual(["start", "error"]);
    expect(events.at(-1)?.message).toBe(`Ollama at ${url}/v1 refused the connection: is it running?`);
    const runId = events[0]?.runId;
    expect((await t.json<Event>(`/api/chat/provenance?runId=${runId}`)).body).toMatchObject({
      status: "failed",
    });
  } finally {
    await t.close();
  }
});

test("a local OpenAI-compatible server (models.json) refusing the connection fails at once too", async () => {
  const t = await createTestApp();
  const url = `http://127.0.0.1:${closedPort()}/v1`;
  const agentDir = `${t.dataDir}/pi-agent/local`;
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(
    `${agentDir}/models.json`,
    JSON.stringify({
      providers: {
        localai: { baseUrl: url, api: "openai-completions", apiKey: "k", models: [{ id: "m", name: "M" }] },
      },
    }),
  );
  try {
    const events = await lines(await chat(t, { message: "hello", model: "localai/m" }));
    expect(events.some((e) => e.type === "retry")).toBe(false);
    expect(events.at(-1)).toMatchObject({
      type: "error",
      message: `The local server 'localai' at ${url} refused the connection: is it running?`,
    });
  } finally {
    await t.close();
  }
});

test("the offline reply's instructions work as written: a stored key is used at once, no restart", async () => {
  const t = await createTestApp();
  try {
    const events = await lines(await chat(t, { message: "anyone there?" }));
    const reply = events
      .filter((e) => e.type === "delta")
      .map((e) => e.text)
      .join("");
    expect(reply).toContain("No model is configured");
    expect(reply).toContain("no restart needed");
    // The menu it names is the web UI's (tests/e2e/ui-settings.test.ts checks the page has it).
    expect(reply).toContain("the Model menu above the chat");
    // Follow it literally: the route and the body it names.
    const [, route, body] = reply.match(/POST (\/api\/chat\/providers) with (\{[^}]*\})/) ?? [];
    expect(route).toBe("/api/chat/providers");
    const stored = await t.json<Event>(route as string, postJson(JSON.parse(body as string)));
    expect(stored.status).toBe(200);
    // The same server, without a restart, now defaults to that provider for this owner.
    const models = await t.json<Event>("/api/chat/models");
    expect(models.body.selectedModelKey).toStartWith("openai/");
    expect(models.body.diagnostics.join("\n")).not.toContain("No provider is configured");
    const session = events[0]?.sessionId;
    const live = t.family("chat").runtime.host.find("local", { sessionId: session });
    expect(live?.session.model?.provider).toBe("offline");
    expect((await t.family("chat").runtime.host.defaultModel(live?.settings, "local")).provider).toBe(
      "openai",
    );
  } finally {
    await t.close();
  }
});

test("what counts as a local server: this machine and private networks, never a public name", () => {
  for (const url of [
    "http://127.0.0.1:11434",
    "http://localhost:8080/v1",
    "http://[::1]:11434",
    "http://10.0.0.5:8000",
    "http://192.168.1.20/v1",
    "http://172.20.0.2:11434",
    "http://[fd00::1]:80",
    "http://box.local:11434",
  ])
    expect({ url, local: isLocalEndpoint(url) }).toEqual({ url, local: true });
  for (const url of [
    "https://api.openai.com/v1",
    "https://fcbarcelona.example/v1",
    "http://172.32.0.1",
    "http://8.8.8.8",
    "offline:",
  ])
    expect({ url, local: isLocalEndpoint(url) }).toEqual({ url, local: false });
});

test("every family's model calls fail at once on a refused local server too (ModelService stream and complete)", async () => {
  const url = `http://127.0.0.1:${closedPort()}`;
  const models = new ModelService(createEnvSource({ OLLAMA_BASE_URL: url }));
  const model = await models.resolve("ollama/qwen3:4b");
  const context = { messages: [{ role: "user" as const, content: "hi", timestamp: Date.now() }] };
  const expected = `Ollama at ${url}/v1 refused the connection: is it running?`;
  const reply = await models.complete(model, context);
  expect(reply).toMatchObject({ stopReason: "error", errorMessage: expected });
  const events: string[] = [];
  const stream = models.stream(model, context);
  for await (const event of stream) events.push(event.type);
  expect(events).toEqual(["error"]);
  expect((await stream.result()).errorMessage).toBe(expected);
  // A running local server streams as before through the same wrapper.
  const running = new ModelService(createEnvSource({ OLLAMA_BASE_URL: `http://127.0.0.1:${ollama.port}` }));
  const answer = await running.complete(await running.resolve("ollama/qwen3:4b"), context);
  expect(answer.content).toEqual([{ type: "text", text: "Hi from qwen3:4b" }]);
});
