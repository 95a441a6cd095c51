/**
 * Provider models through `/v1/chat/completions` take the key the caller stored in Settings → Providers
 * before the server's own, and never another user's: a scripted Groq-compatible provider on a loopback
 * port records the `Authorization` header of each request, driven through the official `openai` SDK on
 * a team server with each user's own access token.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import OpenAI from "openai";
import { openAiCompatibleModel } from "../../server/models/compatible.ts";
import { authApp, type SignedUser, signUp } from "../auth/auth-app.ts";
import { postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";

setDefaultTimeout(60_000);

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let upstream: ReturnType<typeof Bun.serve>;
const seen: string[] = [];

const reply = `data: ${JSON.stringify({ id: "u", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "ok" }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`;

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      seen.push(request.headers.get("authorization") ?? "");
      return new Response(reply, { headers: { "content-type": "text/event-stream" } });
    },
  });
  t = await authApp();
  server = listen(t);
  // A catalog provider's model (Groq's id) served by the scripted provider; the server's own key for it.
  const model = openAiCompatibleModel({
    id: "scripted",
    name: "Scripted Groq",
    provider: "groq",
    baseUrl: `http://127.0.0.1:${upstream.port}/v1`,
  });
  t.ctx.models.register(model, { apiKey: "server-key" });
});

afterAll(async () => {
  await server.stop();
  await t.close();
  upstream.stop(true);
});

async function sdkFor(user: SignedUser): Promise<OpenAI> {
  const created = await t.json<{ token: string }>(
    "/api/auth/tokens",
    postJson({ name: "c", scopes: ["chat"] }, user.bearer),
  );
  expect(created.status).toBe(200);
  return new OpenAI({ baseURL: `${server.url}/v1`, apiKey: created.body.token, maxRetries: 0 });
}

const ask = async (client: OpenAI) => {
  const before = seen.length;
  const answer = await client.chat.completions.create({
    model: "groq/scripted",
    messages: [{ role: "user", content: "hi" }],
  });
  expect(answer.choices[0]?.message.content).toBe("ok");
  return seen.slice(before);
};

test("the caller's stored key goes to the provider, before the server's; another user's never", async () => {
  const ann = await signUp(t, "ann@example.org");
  const bob = await signUp(t, "bob@example.org");
  const annSdk = await sdkFor(ann);
  const bobSdk = await sdkFor(bob);

  // Nobody stored a key: the server's own.
  expect(await ask(annSdk)).toEqual(["Bearer server-key"]);

  const stored = await t.request(
    "/api/chat/providers",
    postJson({ provider: "groq", apiKey: "gsk-ann-own" }, ann.bearer),
  );
  expect(stored.status).toBe(200);
  expect(await ask(annSdk)).toEqual(["Bearer gsk-ann-own"]);
  // Bob stored none: the server's key, never Ann's.
  expect(await ask(bobSdk)).toEqual(["Bearer server-key"]);

  await t.request("/api/chat/providers", postJson({ provider: "groq", apiKey: "gsk-bob-own" }, bob.bearer));
  expect(await ask(bobSdk)).toEqual(["Bearer gsk-bob-own"]);
  expect(await ask(annSdk)).toEqual(["Bearer gsk-ann-own"]);
});
