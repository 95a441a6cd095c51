/**
 * Who may use the OpenAI-compatible endpoint. A team server takes personal access tokens only (a
 * session's own credential is 403, none is 401), each model kind needs its family's scope (`chat` for
 * provider models, `agents`, `turns`, `search`), the model list shows only what the token reaches, and
 * another user's agent is `model_not_found`. In local mode a cross-site page cannot call it (the local
 * surface's Origin rule), while programs without an Origin can. All through the official SDK where a
 * client would use it.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import OpenAI from "openai";
import { authApp, type SignedUser, signUp } from "../auth/auth-app.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";

setDefaultTimeout(60_000);

let t: TestApp | undefined;
let server: { url: string; stop(): Promise<void> } | undefined;
afterEach(async () => {
  await server?.stop();
  await t?.close();
  t = server = undefined;
});

async function token(app: TestApp, user: SignedUser, scopes: string[]): Promise<string> {
  const created = await app.json<{ token: string }>(
    "/api/auth/tokens",
    postJson({ name: scopes.join(" ") || "none", scopes }, user.bearer),
  );
  expect(created.status).toBe(200);
  return created.body.token;
}

const ask = (client: OpenAI, model: string) =>
  client.chat.completions
    .create({ model, messages: [{ role: "user", content: "hello" }] })
    .catch((e: unknown) => e);

test("a team server takes access tokens only, each model kind with its family's scope", async () => {
  t = await authApp();
  server = listen(t);
  const ann = await signUp(t, "ann@example.org");
  const sdk = (apiKey: string) => new OpenAI({ baseURL: `${server?.url}/v1`, apiKey, maxRetries: 0 });

  // No credential: 401; the session's own bearer credential: 403, both in OpenAI's envelope.
  const anonymous = await fetch(`${server.url}/v1/models`);
  expect(anonymous.status).toBe(401);
  expect(((await anonymous.json()) as { error: { type: string } }).error.type).toBe("authentication_error");
  const session = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { ...ann.bearer, "content-type": "application/json" },
    body: JSON.stringify({ model: "offline/offline", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(session.status).toBe(403);
  expect(((await session.json()) as { error: { code: string } }).error.code).toBe("token_required");

  // A token with chat reaches provider models, not agents or turns.
  const chat = sdk(await token(t, ann, ["chat"]));
  const answer = (await ask(chat, "offline/offline")) as OpenAI.ChatCompletion;
  expect(answer.choices[0]?.message.content).toContain("offline model");
  for (const model of ["rlm", "agent/anyone", "search/default"]) {
    const refused = await ask(chat, model);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe("insufficient_scope");
  }
  const chatModels = (await chat.models.list()).data.map((m) => m.id);
  expect(chatModels).toContain("offline/offline");
  expect(chatModels).not.toContain("rlm");

  // A token with agents only: provider models are refused, and the list has no provider model.
  const agentsOnly = sdk(await token(t, ann, ["agents"]));
  expect(await ask(agentsOnly, "offline/offline")).toBeInstanceOf(OpenAI.PermissionDeniedError);
  expect((await agentsOnly.models.list()).data.map((m) => m.id)).not.toContain("offline/offline");

  // chat:read lists but cannot run.
  const reader = sdk(await token(t, ann, ["chat:read"]));
  expect((await reader.models.list()).data.map((m) => m.id)).toContain("offline/offline");
  expect(await ask(reader, "offline/offline")).toBeInstanceOf(OpenAI.PermissionDeniedError);
});

test("another user's agent is model_not_found, by name and by id, and absent from the list", async () => {
  t = await authApp();
  server = listen(t);
  const ann = await signUp(t, "ann@example.org");
  const bob = await signUp(t, "bob@example.org");
  const created = await t.json<{ id: string }>(
    "/v1/agents",
    postJson({ name: "annsecret", role: "helper" }, ann.bearer),
  );
  expect(created.status).toBe(200);
  const bobClient = new OpenAI({
    baseURL: `${server.url}/v1`,
    apiKey: await token(t, bob, ["agents", "chat"]),
    maxRetries: 0,
  });
  for (const model of ["agent/annsecret", `agent/${created.body.id}`, "fleet/annsecret"]) {
    const refused = await ask(bobClient, model);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe("model_not_found");
  }
  const missing = await bobClient.models.retrieve("agent/annsecret").catch((e) => e);
  expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  expect((await bobClient.models.list()).data.map((m) => m.id)).not.toContain("agent/annsecret");
  // Ann's own token sees it.
  const annClient = new OpenAI({
    baseURL: `${server.url}/v1`,
    apiKey: await token(t, ann, ["agents:read"]),
    maxRetries: 0,
  });
  expect((await annClient.models.list()).data.map((m) => m.id)).toContain("agent/annsecret");
});

test("local mode: a cross-site page is refused, a program without an Origin is served", async () => {
  t = await createTestApp();
  server = listen(t);
  const body = JSON.stringify({ model: "offline/offline", messages: [{ role: "user", content: "hi" }] });
  const pages: Record<string, string>[] = [
    { origin: "https://evil.example" },
    { origin: "null" },
    { "sec-fetch-site": "cross-site" },
  ];
  for (const headers of pages) {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe("permission_error");
  }
  const program = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  expect(program.status).toBe(200);
});
