/**
 * The OpenAI-compatible endpoint driven by the official `openai` SDK against a live server on a loopback
 * port: the model list, completions and streams on the offline model and on a provider model (a
 * scripted OpenAI-compatible server on a real port), parameters passed through, a tool-call round trip,
 * stop sequences, usage, errors as the SDK's APIError with OpenAI's envelope, and a stream the client
 * abandons ending the provider request.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import OpenAI from "openai";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { waitFor } from "../helpers/wait.ts";
import { type Upstream, upstreamProvider } from "./helpers.ts";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let client: OpenAI;
let upstream: Upstream;

beforeAll(async () => {
  t = await createTestApp();
  server = listen(t);
  upstream = upstreamProvider(t);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused-in-local-mode", maxRetries: 0 });
});
afterAll(async () => {
  upstream.stop();
  await server.stop();
  await t.close();
});

test("the model list names the offline model, the provider models and rlm, owned_by telling the kind", async () => {
  const ids = new Map<string, string>();
  for await (const model of client.models.list()) ids.set(model.id, model.owned_by);
  expect(ids.get("offline/offline")).toBe("atrium-provider");
  expect(ids.get("scripted-up/model")).toBe("atrium-provider");
  expect(ids.get("rlm")).toBe("atrium-rlm");
  const one = await client.models.retrieve("scripted-up/model");
  expect(one).toMatchObject({ id: "scripted-up/model", object: "model", owned_by: "atrium-provider" });
  const missing = await client.models.retrieve("nope/nothing").catch((e) => e);
  expect(missing).toBeInstanceOf(OpenAI.APIError);
  expect(missing.status).toBe(404);
  expect(missing.code).toBe("model_not_found");
});

test("the offline model answers, streamed and not, with usage when asked", async () => {
  const done = await client.chat.completions.create({
    model: "offline/offline",
    messages: [{ role: "user", content: "hello there" }],
  });
  expect(done.object).toBe("chat.completion");
  expect(done.choices[0]?.message.content).toContain('Your message was: "hello there"');
  expect(done.choices[0]?.finish_reason).toBe("stop");
  const stream = await client.chat.completions.create({
    model: "offline/offline",
    messages: [{ role: "user", content: "hello there" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let chunks = 0;
  let usage: unknown;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta.content ?? "";
    if (chunk.usage) usage = chunk.usage;
  }
  expect(chunks).toBeGreaterThan(3);
  expect(text).toBe(done.choices[0]?.message.content as string);
  expect(usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
});

test("a provider model gets the messages, system prompt, temperature, max tokens and stop; usage comes back", async () => {
  upstream.replies.push({ text: "one two three STOP four five" });
  const done = await client.chat.completions.create({
    model: "scripted-up/model",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "count" },
      { role: "assistant", content: "ok" },
      { role: "user", content: "again" },
    ],
    temperature: 0.3,
    max_tokens: 50,
    stop: ["STOP"],
  });
  expect(done.choices[0]?.message.content).toBe("one two three ");
  expect(done.choices[0]?.finish_reason).toBe("stop");
  const sent = upstream.requests.at(-1) as Record<string, unknown>;
  const messages = sent.messages as { role: string; content: unknown }[];
  expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
  expect(JSON.stringify(messages[0]?.content)).toContain("Be brief.");
  expect(sent.temperature).toBe(0.3);
  expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(50);
  expect(sent.stop).toEqual(["STOP"]);
  // Usage is the provider's own count.
  upstream.replies.push({ text: "fine" });
  const counted = await client.chat.completions.create({
    model: "scripted-up/model",
    messages: [{ role: "user", content: "hi" }],
  });
  expect(counted.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
});

test("a tool call round trip: the client's tool is offered, its call relayed, its result passed back", async () => {
  const tools = [
    {
      type: "function" as const,
      function: {
        name: "get_weather",
        description: "Weather of a city",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    },
  ];
  upstream.replies.push({ toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' }] });
  const first = await client.chat.completions.create({
    model: "scripted-up/model",
    messages: [{ role: "user", content: "Weather in Oslo?" }],
    tools,
    tool_choice: { type: "function", function: { name: "get_weather" } },
  });
  const call = first.choices[0]?.message.tool_calls?.[0];
  expect(first.choices[0]?.finish_reason).toBe("tool_calls");
  expect(call?.type === "function" && call.function.name).toBe("get_weather");
  expect(call?.type === "function" && JSON.parse(call.function.arguments)).toEqual({ city: "Oslo" });
  const offered = upstream.requests.at(-1) as {
    tools: { function: { name: string } }[];
    tool_choice: unknown;
  };
  expect(offered.tools.map((x) => x.function.name)).toEqual(["get_weather"]);
  expect(offered.tool_choice).toEqual({ type: "function", function: { name: "get_weather" } });

  upstream.replies.push({ text: "It is sunny in Oslo." });
  const stream = await client.chat.completions.create({
    model: "scripted-up/model",
    messages: [
      { role: "user", content: "Weather in Oslo?" },
      first.choices[0]?.message as OpenAI.ChatCompletionMessageParam,
      { role: "tool", tool_call_id: call?.id as string, content: "sunny, 21 C" },
    ],
    tools,
    stream: true,
  });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  expect(text).toBe("It is sunny in Oslo.");
  const sent = upstream.requests.at(-1) as {
    messages: { role: string; content: unknown; tool_call_id?: string; tool_calls?: unknown[] }[];
  };
  expect(sent.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  expect(sent.messages[1]?.tool_calls).toHaveLength(1);
  expect(sent.messages[2]).toMatchObject({ tool_call_id: call?.id });
  expect(JSON.stringify(sent.messages[2]?.content)).toContain("sunny, 21 C");
});

test("a streamed tool call arrives as tool_calls deltas the SDK assembles", async () => {
  upstream.replies.push({ toolCalls: [{ id: "call_9", name: "lookup", arguments: '{"q":"x"}' }] });
  const stream = client.chat.completions.stream({
    model: "scripted-up/model",
    messages: [{ role: "user", content: "look it up" }],
    tools: [
      {
        type: "function",
        function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } },
      },
    ],
  });
  const final = await stream.finalChatCompletion();
  expect(final.choices[0]?.message.tool_calls?.[0]).toMatchObject({
    id: "call_9",
    function: { name: "lookup", arguments: '{"q":"x"}' },
  });
});

test("bad input is a 400 in OpenAI's envelope naming the parameter", async () => {
  const cases: [Record<string, unknown>, string | null][] = [
    [{ model: "offline/offline", messages: [{ role: "user", content: "x" }], n: 2 }, "n"],
    [{ model: "offline/offline", messages: [{ role: "user", content: "x" }], logprobs: true }, "logprobs"],
    [
      {
        model: "offline/offline",
        messages: [{ role: "user", content: "x" }],
        audio: { voice: "alloy", format: "mp3" },
      },
      "audio",
    ],
    [{ model: "offline/offline", prompt: "complete me" }, "messages"],
    [{ model: "offline/offline", messages: [{ role: "user", content: "x" }], temperature: 9 }, "temperature"],
    [
      { model: "offline/offline", messages: [{ role: "user", content: "x" }], max_tokens: 10_000_000 },
      "max_tokens",
    ],
    [{ model: "offline/offline", messages: [{ role: "wizard", content: "x" }] }, "messages[0].role"],
    [
      {
        model: "scripted-up/model",
        messages: [
          { role: "user", content: [{ type: "image_url", image_url: { url: "http://127.0.0.1:1/x.png" } }] },
        ],
      },
      "messages[0].content[0].image_url.url",
    ],
  ];
  for (const [body, param] of cases) {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as { error: Record<string, unknown> };
    expect({ body, status: response.status, param: answer.error.param }).toEqual({
      body,
      status: 400,
      param,
    });
    expect(answer.error.type).toBe("invalid_request_error");
    expect(typeof answer.error.message).toBe("string");
  }
  const notJson = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{nope",
  });
  expect(notJson.status).toBe(400);
  expect(((await notJson.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
  // Through the SDK: an APIError with the status and the parameter.
  const error = await client.chat.completions
    .create({ model: "offline/offline", messages: [{ role: "user", content: "x" }], n: 3 })
    .catch((e) => e);
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  expect(error.param).toBe("n");
  const unknown = await client.chat.completions
    .create({ model: "nope/nothing", messages: [{ role: "user", content: "x" }] })
    .catch((e) => e);
  expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
  expect(unknown.code).toBe("model_not_found");
  // The agents family keeps its own envelope on its /v1 paths.
  const agents = await fetch(`${server.url}/v1/agents/nope`);
  expect(await agents.json()).toHaveProperty("detail");
});

test("a body past the cap is a 413 in OpenAI's envelope, before it is read whole", async () => {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "offline/offline",
      messages: [{ role: "user", content: "x".repeat(17 * 1024 * 1024) }],
    }),
  });
  expect(response.status).toBe(413);
  expect(((await response.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
});

test("a stream the client abandons ends the provider request", async () => {
  upstream.replies.push({ text: "word ".repeat(400), delayMs: 20 });
  const before = upstream.abandoned;
  const abort = new AbortController();
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "scripted-up/model",
      messages: [{ role: "user", content: "go" }],
      stream: true,
    }),
    signal: abort.signal,
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let seen = "";
  while ((seen.match(/word/g) ?? []).length < 3)
    seen += new TextDecoder().decode((await reader.read()).value);
  abort.abort();
  await waitFor(() => upstream.abandoned > before, { timeoutMs: 10_000 });
  expect(upstream.abandoned).toBe(before + 1);
});
