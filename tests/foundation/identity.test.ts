/** One identity per request: local mode, protected mode and its public routes (docs/design.md §4). */
import { afterEach, describe, expect, test } from "bun:test";
import { publicRoutes } from "../../server/auth/identity.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { PROBE_PATHS, PUBLIC_GET_PATHS, probeRoutes } from "../helpers/probes.ts";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("local mode", () => {
  test("every request is the local user; Authorization headers are ignored", async () => {
    t = await createTestApp({ plugins: [probeRoutes] });
    for (const headers of [{}, { authorization: "Bearer someone-else" }] as Record<string, string>[]) {
      const { status, body } = await t.json(PROBE_PATHS.turns, { headers });
      expect(status).toBe(200);
      expect(body).toMatchObject({ identity: { id: "local", kind: "local" } });
    }
  });
});

const PROTECTED_ENVS = [
  { APP_CHAT_RUNTIME_REQUIRE_AUTH: "1" },
  { APP_MANAGED_AUTH_URL: "https://auth.example.test", APP_MANAGED_AUTH_AUDIENCE: "atrium" },
  { APP_HOSTED: "1" },
];

describe("protected mode", () => {
  test.each(PROTECTED_ENVS)("%p: non-public routes answer 401 in each family's envelope", async (env) => {
    t = await createTestApp({ env, plugins: [probeRoutes] });
    expect(t.ctx.config.mode.kind).toBe("protected");

    const chat = await t.json(PROBE_PATHS.chat);
    expect(chat.status).toBe(401);
    expect(chat.body).toEqual({ message: "Authentication required" });
    const turns = await t.json(PROBE_PATHS.turns);
    expect(turns.body).toEqual({ error: { code: "unauthorized", message: "Authentication required" } });
    const search = await t.json(PROBE_PATHS.search, postJson({ query: "x" }));
    expect(search.status).toBe(401);
    expect(search.body).toEqual({ detail: "Authentication required" });
    // Before validation: a bad body from an anonymous caller is still a 401, not a 422.
    expect((await t.request(PROBE_PATHS.agents, postJson("{broken"))).status).toBe(401);
    // Unknown routes do not reveal whether they exist.
    expect((await t.request("/v1/nothing")).status).toBe(401);
  });

  test("public routes stay open", async () => {
    t = await createTestApp({ env: PROTECTED_ENVS[0] });
    for (const path of PUBLIC_GET_PATHS) {
      const response = await t.request(path);
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
    }
  });

  test("a credential a resolver recognises becomes the identity, resolved once per request", async () => {
    let calls = 0;
    const resolver = (request: Request) => {
      calls++;
      return request.headers.get("authorization") === "Bearer alice-token"
        ? { id: "alice", kind: "bearer" as const }
        : undefined;
    };
    t = await createTestApp({ env: PROTECTED_ENVS[0], resolvers: [resolver], plugins: [probeRoutes] });
    const ok = await t.json(PROBE_PATHS.turns, { headers: { authorization: "Bearer alice-token" } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ identity: { id: "alice", kind: "bearer" } });
    expect(calls).toBe(1);
    const wrong = await t.request(PROBE_PATHS.turns, { headers: { authorization: "Bearer mallory" } });
    expect(wrong.status).toBe(401);
  });
});

test("the public route list is exactly docs/design.md §4's: the app's surfaces and the routes declared public", async () => {
  t = await createTestApp();
  const isPublicRoute = publicRoutes(t.ctx.routePolicies);
  const open: [string, string][] = [
    ["GET", "/"],
    ["GET", "/health"],
    ["GET", "/health/ready"],
    ["GET", "/api/health"],
    ["GET", "/swagger"],
    ["GET", "/swagger/json"],
    ["GET", "/app/"],
    ["GET", "/app/assets/main.js"],
    ["GET", "/favicon.ico"],
    ["POST", "/api/auth/sign-in"],
    ["GET", "/api/auth/session"],
    ["POST", "/api/webhooks/sandbox"],
  ];
  const closed: [string, string][] = [
    ["POST", "/"],
    ["GET", "/api/chat/models"],
    ["GET", "/api/sessions"],
    ["GET", "/api/settings"],
    ["POST", "/search/local"],
    ["GET", "/v1/agents"],
    ["GET", "/api/sandbox/preview"],
    ["GET", "/api/webhooks/sandbox"],
    ["POST", "/app/x"],
    ["POST", "/favicon.ico"],
    ["GET", "/healthz"],
    ["GET", "/swaggerx"],
  ];
  for (const [method, path] of open)
    expect({ method, path, open: isPublicRoute(method, path) }).toEqual({ method, path, open: true });
  for (const [method, path] of closed)
    expect({ method, path, open: isPublicRoute(method, path) }).toEqual({ method, path, open: false });
});
