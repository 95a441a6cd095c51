/**
 * `POST /api/chat/providers/{id}/test`: one real request to a stub provider on a real port. A good key
 * connects, a bad key gives the provider's own words (never the key), a closed port is "unreachable",
 * and on a team server a request cannot name a base URL and a user's Ollama URL cannot reach the
 * server's own network (no probing of it).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

const GOOD = "sk-good-0123456789";
const BAD = "sk-badkey-9876543210";

// Speaks OpenAI's GET /v1/models, with OpenAI's 401 body, which echoes a masked key.
const provider = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(request) {
    if (new URL(request.url).pathname !== "/v1/models") return new Response("not here", { status: 404 });
    const key = request.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
    if (key === GOOD) return Response.json({ data: [{ id: "gpt-stub" }, { id: "gpt-stub-mini" }] });
    return Response.json(
      {
        error: {
          message: `Incorrect API key provided: ${key.slice(0, 8)}****${key.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      },
      { status: 401 },
    );
  },
});
// A port that was listening a moment ago and is closed now: connection refused.
const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
const closedPort = closed.port;
closed.stop(true);

const base = `http://127.0.0.1:${provider.port}/v1`;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
  provider.stop(true);
});

const testOf = (id: string, body: unknown, headers: Record<string, string> = {}) =>
  t.json<Record<string, unknown>>(`/api/chat/providers/${id}/test`, postJson(body, headers));

test("a good key connects and says how many models answered", async () => {
  const { status, body } = await testOf("openai", { apiKey: GOOD, baseUrl: base });
  expect(status).toBe(200);
  expect(body).toEqual({
    ok: true,
    provider: "openai",
    detail: `Connected to OpenAI at ${base}/models: 2 models`,
    models: 2,
  });
});

test("a bad key: the provider's own message, with the key scrubbed", async () => {
  const { status, body } = await testOf("openai", { apiKey: BAD, baseUrl: base });
  expect(status).toBe(200);
  expect(body.ok).toBe(false);
  expect(body.error).toContain("OpenAI refused the key (401): Incorrect API key provided:");
  expect(body.error).toContain("You can find your API key");
  expect(JSON.stringify(body)).not.toContain(BAD);
  expect(JSON.stringify(body)).not.toContain(BAD.slice(0, 8));
});

test("the stored key is tested when none is typed", async () => {
  expect((await t.json("/api/chat/providers", postJson({ provider: "openai", apiKey: GOOD }))).status).toBe(
    200,
  );
  const { body } = await testOf("openai", { baseUrl: base });
  expect(body.ok).toBe(true);
  await t.json("/api/chat/providers", postJson({ provider: "openai", apiKey: null }));
  const none = await testOf("openai", {});
  expect(none.body).toEqual({
    ok: false,
    provider: "openai",
    error: "OpenAI has no key: type one above or set OPENAI_API_KEY",
  });
});

test("a closed port is unreachable, naming the URL; a name that does not resolve says so", async () => {
  const refused = await testOf("openai", { apiKey: GOOD, baseUrl: `http://127.0.0.1:${closedPort}/v1` });
  expect(refused.body.ok).toBe(false);
  expect(refused.body.error).toBe(
    `OpenAI is unreachable at http://127.0.0.1:${closedPort}/v1/models: connection refused`,
  );
  const ollama = await testOf("ollama", { apiKey: `http://127.0.0.1:${closedPort}` });
  expect(ollama.body.error).toBe(
    `Ollama is unreachable at http://127.0.0.1:${closedPort}/api/tags: connection refused`,
  );
  const dns = await testOf("openai", { apiKey: GOOD, baseUrl: "http://no-such-host.invalid/v1" });
  expect(dns.body.error).toContain("unreachable at http://no-such-host.invalid/v1/models");
});

test("another status names it with the provider's words; a URL's credentials are never shown", async () => {
  const { body } = await testOf("openai", {
    apiKey: GOOD,
    baseUrl: `http://user:pw@127.0.0.1:${provider.port}`,
  });
  expect(body).toEqual({
    ok: false,
    provider: "openai",
    error: `OpenAI answered 404 at http://127.0.0.1:${provider.port}/models: not here`,
  });
});

test("bad input: an unknown provider, a baseUrl that is not http(s)", async () => {
  expect((await testOf("nope", {})).status).toBe(400);
  const ftp = await testOf("openai", { apiKey: GOOD, baseUrl: "file:///etc/passwd" });
  expect(ftp.status).toBe(400);
  expect(ftp.body.message).toContain("only http and https URLs");
});

test("OpenAI documents the route", async () => {
  const { body } = await t.json<{ paths: Record<string, Record<string, unknown>> }>("/swagger/json");
  const entry = body.paths["/api/chat/providers/{id}/test"]?.post as Record<string, unknown>;
  expect(entry).toBeDefined();
  expect(JSON.stringify(entry)).toContain("baseUrl");
});

test("team server: a user is needed, a request cannot name a base URL, and a user's Ollama URL obeys the outbound rule", async () => {
  const team = await createTestApp(twoUsers());
  try {
    const path = "/api/chat/providers/openai/test";
    expect((await team.json(path, postJson({ apiKey: GOOD }))).status).toBe(401);
    const probe = await team.json<{ message: string }>(
      path,
      postJson({ apiKey: GOOD, baseUrl: base }, asUser("ann")),
    );
    expect(probe.status).toBe(400);
    expect(probe.body.message).toContain("accepted only in local mode");
    // An Ollama URL typed or stored is a URL a user gives: on a team server, loopback is refused before
    // any connection (tests/chat/discover-outbound.test.ts counts the connections).
    const refusal = `Ollama at http://127.0.0.1:${provider.port}/api/tags was refused before connecting: 127.0.0.1 is not a public address (on a team server a URL a user gives reaches only public addresses; the operator can allow an origin with APP_OUTBOUND_ALLOW)`;
    const typed = await team.json<{ ok: boolean; provider: string; error: string }>(
      "/api/chat/providers/ollama/test",
      postJson({ apiKey: `http://127.0.0.1:${provider.port}` }, asUser("ann")),
    );
    expect(typed.status).toBe(200);
    expect(typed.body).toEqual({ ok: false, provider: "ollama", error: refusal });
    await team.json(
      "/api/chat/providers",
      postJson({ provider: "ollama", apiKey: `http://127.0.0.1:${provider.port}` }, asUser("ann")),
    );
    const stored = await team.json<{ ok: boolean; provider: string; error: string }>(
      "/api/chat/providers/ollama/test",
      postJson({}, asUser("ann")),
    );
    expect(stored.body).toEqual({ ok: false, provider: "ollama", error: refusal });
  } finally {
    await team.close();
  }
});
