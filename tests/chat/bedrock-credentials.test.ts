/**
 * Amazon Bedrock's three fields (access key id, secret access key, region) through
 * `POST /api/chat/providers`: checked before anything is stored, never echoed, one user's only, and
 * signing that user's own Bedrock requests (a scripted Bedrock endpoint on a loopback port records the
 * SigV4 `Authorization` header, which names the key id and the region).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Api, Model } from "@mariozechner/pi-ai";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { chat } from "../helpers/chat.ts";
import { lines } from "../helpers/streams.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

const ALICE = {
  accessKeyId: "AKIAALICEEXAMPLE0001",
  secretAccessKey: "alice/Secret+Access/Key0123456789abcdef",
  region: "eu-west-3",
};

interface Signed {
  authorization: string;
  path: string;
}

let t: TestApp;
let bedrock: ReturnType<typeof Bun.serve>;
const signed: Signed[] = [];
let modelId: string;

beforeAll(async () => {
  // No instance-metadata lookup for a user without keys (the SDK's last resort is a non-loopback
  // address), and HTTP/1.1 so the scripted endpoint is a plain Bun server.
  process.env.AWS_EC2_METADATA_DISABLED = "true";
  process.env.AWS_BEDROCK_FORCE_HTTP1 = "1";
  bedrock = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const url = new URL(request.url);
      signed.push({ authorization: request.headers.get("authorization") ?? "", path: url.pathname });
      return new Response(JSON.stringify({ message: "scripted refusal" }), {
        status: 403,
        headers: { "content-type": "application/json", "x-amzn-errortype": "AccessDeniedException" },
      });
    },
  });
  t = await createTestApp(twoUsers());
  const model: Model<Api> = {
    id: "scripted-bedrock",
    name: "Scripted Bedrock",
    api: "bedrock-converse-stream",
    provider: "amazon-bedrock",
    baseUrl: `http://127.0.0.1:${bedrock.port}`,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 8192,
    maxTokens: 1024,
  };
  modelId = t.ctx.models.register(model);
});

afterAll(async () => {
  await t.close();
  bedrock.stop(true);
});

type ProviderRow = {
  id: string;
  configured: boolean;
  fields?: { name: string; label: string; secret: boolean; set: boolean }[];
};

async function bedrockRow(user: string): Promise<ProviderRow> {
  const r = await t.json<{ providers: ProviderRow[] }>("/api/chat/providers", { headers: asUser(user) });
  const row = r.body.providers.find((p) => p.id === "amazon-bedrock");
  if (!row) throw new Error("no Bedrock row");
  return row;
}

const store = (user: string, body: unknown) => t.request("/api/chat/providers", postJson(body, asUser(user)));

test("a missing or malformed field is a 400 naming it, and stores nothing", async () => {
  const bad: [unknown, string][] = [
    [{ provider: "amazon-bedrock", credentials: { ...ALICE, region: undefined } }, "region"],
    [{ provider: "amazon-bedrock", credentials: { ...ALICE, secretAccessKey: "  " } }, "secretAccessKey"],
    [{ provider: "amazon-bedrock", credentials: { region: ALICE.region } }, "accessKeyId"],
    [{ provider: "amazon-bedrock", credentials: { ...ALICE, region: "Mars; rm -rf" } }, "region"],
    [{ provider: "amazon-bedrock", credentials: { ...ALICE, accessKeyId: "not a key id" } }, "accessKeyId"],
    [{ provider: "amazon-bedrock", apiKey: "one-key-is-not-enough" }, "credentials"],
    [{ provider: "openai", credentials: ALICE }, "credentials"],
  ];
  for (const [body, field] of bad) {
    const response = await store("alice", body);
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).toContain(field);
    expect(text).not.toContain(ALICE.secretAccessKey);
  }
  const row = await bedrockRow("alice");
  expect(row.configured).toBe(false);
  expect(row.fields?.map((f) => [f.name, f.set])).toEqual([
    ["accessKeyId", false],
    ["secretAccessKey", false],
    ["region", false],
  ]);
  const openai = (
    await t.json<{ providers: ProviderRow[] }>("/api/chat/providers", { headers: asUser("alice") })
  ).body.providers.find((p) => p.id === "openai");
  expect(openai?.configured).toBe(false);
});

test("the three fields are stored, shown only as set, and never echoed", async () => {
  const response = await store("alice", { provider: "amazon-bedrock", credentials: ALICE });
  expect(response.status).toBe(200);
  const text = await response.text();
  for (const value of Object.values(ALICE)) expect(text).not.toContain(value);
  const row = await bedrockRow("alice");
  expect(row.configured).toBe(true);
  expect(row.fields?.every((f) => f.set)).toBe(true);
  expect(row.fields?.find((f) => f.name === "secretAccessKey")?.secret).toBe(true);
  const listed = await (await t.request("/api/chat/providers", { headers: asUser("alice") })).text();
  for (const value of Object.values(ALICE)) expect(listed).not.toContain(value);
  const models = await (await t.request("/api/chat/models", { headers: asUser("alice") })).text();
  expect(models).not.toContain(ALICE.secretAccessKey);
  // Another user sees nothing of them.
  const bob = await bedrockRow("bob");
  expect(bob.configured).toBe(false);
  expect(bob.fields?.some((f) => f.set)).toBe(false);
});

test("Alice's Bedrock request is signed with her key id and region; Bob's never with hers", async () => {
  const before = signed.length;
  await lines(await chat(t, { message: "hello", model: modelId }, asUser("alice")));
  const mine = signed.slice(before);
  expect(mine.length).toBeGreaterThan(0);
  expect(mine[0]?.path).toContain("/model/scripted-bedrock/converse-stream");
  expect(mine[0]?.authorization).toMatch(
    new RegExp(
      `^AWS4-HMAC-SHA256 Credential=${ALICE.accessKeyId}/\\d{8}/${ALICE.region}/bedrock/aws4_request`,
    ),
  );
  // The server process itself never saw her variables.
  expect(process.env.AWS_ACCESS_KEY_ID).toBeUndefined();
  expect(process.env.AWS_SECRET_ACCESS_KEY).toBeUndefined();

  const afterAlice = signed.length;
  const events = await lines(await chat(t, { message: "hello", model: modelId }, asUser("bob")));
  expect(JSON.stringify(events)).not.toContain(ALICE.secretAccessKey);
  for (const request of signed.slice(afterAlice))
    expect(request.authorization).not.toContain(ALICE.accessKeyId);
});

test("clearing them (apiKey null) unconfigures Bedrock for that user", async () => {
  const response = await store("alice", { provider: "amazon-bedrock", apiKey: null });
  expect(response.status).toBe(200);
  expect((await bedrockRow("alice")).configured).toBe(false);
});
