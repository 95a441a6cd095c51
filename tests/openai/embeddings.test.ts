/**
 * `POST /v1/embeddings` with an embeddings endpoint named in the policy (`[defaults.search]
 * embeddings_model` and `APP_EMBEDDINGS_BASE_URL`, as search configures it), pointing at a scripted
 * OpenAI-compatible embeddings server on a loopback port, driven by the official `openai` SDK: single and
 * batch inputs in order, both encodings (the SDK asks for base64 by default), usage, bad input as 400
 * naming the parameter, and no route at all (404 in OpenAI's envelope) when no endpoint is configured.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import OpenAI from "openai";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { tempDir } from "../helpers/tmp.ts";
import { type FakeServer, startFakeOpenAi, writeEmbeddingsPolicy } from "../search/openai-fake.ts";

/** A vector that says which text it came from: its length and its first character code. */
const vectorOf = (text: string) => [text.length, text.charCodeAt(0), 0.5];

const dir = tempDir();
let fake: FakeServer;
let withEndpoint: TestApp;
let without: TestApp;
let servers: { url: string; stop(): Promise<void> }[];
let client: OpenAI;
let bare: OpenAI;

beforeAll(async () => {
  fake = startFakeOpenAi({ reply: () => ({ text: "unused" }), embed: (texts) => texts.map(vectorOf) });
  const policy = writeEmbeddingsPolicy(join(dir.path, "policy.toml"));
  withEndpoint = await createTestApp({
    policyPath: policy,
    env: { APP_EMBEDDINGS_BASE_URL: `${fake.url}/v1` },
  });
  without = await createTestApp();
  servers = [listen(withEndpoint), listen(without)];
  client = new OpenAI({ baseURL: `${servers[0]?.url}/v1`, apiKey: "local", maxRetries: 0 });
  bare = new OpenAI({ baseURL: `${servers[1]?.url}/v1`, apiKey: "local", maxRetries: 0 });
});
afterAll(async () => {
  for (const server of servers) await server.stop();
  await withEndpoint.close();
  await without.close();
  await fake.stop();
  dir.remove();
});

test("embeddings.create: one input and a batch, in order, with usage, through the configured endpoint", async () => {
  const one = await client.embeddings.create({ model: "fake-embed", input: "hello" });
  expect(one.object).toBe("list");
  expect(one.model).toBe("fake-embed");
  expect(one.data).toHaveLength(1);
  // The SDK asked for base64 (its default) and decoded it back into these floats.
  expect(Array.from(one.data[0]?.embedding ?? [])).toEqual(vectorOf("hello"));
  expect(fake.embeddings.at(-1)).toMatchObject({ input: ["hello"], model: "fake-embed" });
  expect(one.usage.prompt_tokens).toBeGreaterThan(0);
  expect(one.usage.total_tokens).toBe(one.usage.prompt_tokens);

  const texts = ["alpha", "a much longer beta text", "gamma"];
  const batch = await client.embeddings.create({
    model: "fake-embed",
    input: texts,
    encoding_format: "float",
  });
  expect(batch.data.map((d) => d.index)).toEqual([0, 1, 2]);
  expect(batch.data.map((d) => d.embedding)).toEqual(texts.map(vectorOf));
  expect(batch.usage.prompt_tokens).toBeGreaterThan(one.usage.prompt_tokens);
});

test("bad input is a 400 naming the parameter, and nothing reaches the endpoint", async () => {
  const before = fake.embeddings.length;
  const cases: [Record<string, unknown>, string][] = [
    [{ model: "fake-embed", input: [] }, "input"],
    [{ model: "fake-embed", input: [1, 2] }, "input"],
    [{ model: "fake-embed" }, "input"],
    [{ input: "x" }, "model"],
    [{ model: "fake-embed", input: "x", encoding_format: "int8" }, "encoding_format"],
  ];
  for (const [body, param] of cases) {
    const refused = await client.embeddings
      .create(body as unknown as OpenAI.EmbeddingCreateParams)
      .catch((e) => e);
    expect({ body, status: refused.status, param: refused.param }).toEqual({ body, status: 400, param });
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
  }
  const other = await client.embeddings.create({ model: "other-embed", input: "x" }).catch((e) => e);
  expect(other).toBeInstanceOf(OpenAI.NotFoundError);
  expect(other.code).toBe("model_not_found");
  expect(fake.embeddings.length).toBe(before);
});

test("without an embeddings endpoint the route is absent: 404 in OpenAI's envelope", async () => {
  const missing = await bare.embeddings.create({ model: "fake-embed", input: "x" }).catch((e) => e);
  expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  const raw = await fetch(`${servers[1]?.url}/v1/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "fake-embed", input: "x" }),
  });
  expect(raw.status).toBe(404);
  const body = (await raw.json()) as { error?: { message?: string; type?: string } };
  expect(body.error?.message).toEqual(expect.any(String));
  expect(body.error?.type).toEqual(expect.any(String));
});
