/**
 * The AI SDK's `@ai-sdk/openai-compatible` provider, unchanged, against the live endpoint: `generateText`
 * and `streamText` on a provider model (a scripted OpenAI-compatible server on a real port), the offline
 * model, an agent and a search index.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, streamText } from "ai";
import { agentModel } from "../helpers/agents.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { type Upstream, upstreamProvider } from "./helpers.ts";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let upstream: Upstream;
let atrium: ReturnType<typeof createOpenAICompatible>;

beforeAll(async () => {
  t = await createTestApp();
  server = listen(t);
  upstream = upstreamProvider(t);
  atrium = createOpenAICompatible({
    name: "atrium",
    baseURL: `${server.url}/v1`,
    apiKey: "local",
    includeUsage: true,
  });
  const text = "Ada Lovelace met Charles Babbage in London. Ada Lovelace wrote to Charles Babbage often.";
  await t.request("/search/index", postJson({ documents: [{ name: "ada.txt", text }] }));
});
afterAll(async () => {
  upstream.stop();
  await server.stop();
  await t.close();
});

async function both(model: string, prompt: string) {
  const generated = await generateText({ model: atrium.chatModel(model), prompt, maxRetries: 0 });
  const streamed = streamText({ model: atrium.chatModel(model), prompt, maxRetries: 0 });
  let text = "";
  for await (const delta of streamed.textStream) text += delta;
  return { generated, text, usage: await streamed.usage };
}

test("a provider model: generateText and streamText, with usage", async () => {
  upstream.replies.push({ text: "Hello from upstream." }, { text: "Hello again." });
  const { generated, text, usage } = await both("scripted-up/model", "hi");
  expect(generated.text).toBe("Hello from upstream.");
  expect(generated.usage.inputTokens).toBe(7);
  expect(text).toBe("Hello again.");
  expect(usage.outputTokens).toBe(3);
});

test("the offline model", async () => {
  const { generated, text } = await both("offline/offline", "ping");
  expect(generated.text).toContain('Your message was: "ping"');
  expect(text).toBe(generated.text);
});

test("an agent", async () => {
  const model = agentModel(t, () => "Agent reply.");
  await t.request("/v1/agents", postJson({ name: "sdkagent", role: "assistant", model: model.id }));
  const { generated, text } = await both("agent/sdkagent", "hello agent");
  expect(generated.text).toContain("Agent reply.");
  expect(text).toContain("Agent reply.");
  model.dispose();
});

test("a search index, local and global", async () => {
  for (const model of ["search/default", "search/default/global"]) {
    const { generated, text } = await both(model, "Who did Ada Lovelace meet?");
    expect(generated.text.length).toBeGreaterThan(0);
    expect(text).toBe(generated.text);
  }
});
