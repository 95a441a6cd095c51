/**
 * Personal access tokens on a real app with session auth: created (shown once, `atr_` prefixed, only a
 * hash stored), listed and revoked by their owner only; accepted as `Authorization: Bearer` on every
 * family and as the WebSocket's `auth_token`; scopes refuse what they do not cover with 403 naming the
 * scope; revoked and expired tokens are 401 at once, and an open WebSocket on one closes; bad tokens
 * count against the address's sign-in limit; a token never manages tokens or acts as an admin.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { chat as socketChat } from "../helpers/agents.ts";
import { createTestApp, memoryLogger, postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { authApp, OWN_ORIGIN, type SignedUser, signUp } from "./auth-app.ts";

setDefaultTimeout(30_000);

let t: TestApp | undefined;
let server: { url: string; stop(): Promise<void> } | undefined;
afterEach(async () => {
  await server?.stop();
  await t?.close();
  t = server = undefined;
});

interface Created {
  id: string;
  token: string;
  name: string;
  scopes: string[];
  expiresAt: string | null;
}

async function createToken(app: TestApp, user: SignedUser, body: Record<string, unknown>) {
  const { status, body: created } = await app.json<Created>("/api/auth/tokens", postJson(body, user.bearer));
  expect(status).toBe(200);
  return { ...created, bearer: { authorization: `Bearer ${created.token}` } };
}

const get = (app: TestApp, path: string, headers: Record<string, string>) => app.request(path, { headers });

test("a token is shown once, prefixed, stored hashed, and listed without itself", async () => {
  t = await authApp();
  const ann = await signUp(t, "ann@example.org");
  const created = await createToken(t, ann, { name: "laptop script", scopes: ["search:read", "mcp"] });
  expect(created.token).toMatch(/^atr_[a-z2-7]{24}_[a-z2-7]{32}$/);
  expect(created.scopes).toEqual(["search:read", "mcp"]);
  expect(created.expiresAt).toBeNull();
  const secret = created.token.split("_")[2] as string;
  const row = (await t.ctx.database.get("SELECT * FROM auth_tokens WHERE id = ?", [created.id])) as Record<
    string,
    unknown
  >;
  expect(JSON.stringify(row)).not.toContain(secret);
  expect((row.secret_hash as Uint8Array).length).toBe(32);

  const { body } = await t.json<{ tokens: Record<string, unknown>[] }>("/api/auth/tokens", {
    headers: ann.bearer,
  });
  expect(body.tokens).toHaveLength(1);
  expect(body.tokens[0]).toMatchObject({ id: created.id, name: "laptop script", lastUsedAt: null });
  expect(JSON.stringify(body)).not.toContain(secret);

  // Using it records when, and the list says so.
  expect((await get(t, "/search/indexes", created.bearer)).status).toBe(200);
  const after = await t.json<{ tokens: { lastUsedAt: string | null }[] }>("/api/auth/tokens", {
    headers: ann.cookie,
  });
  expect(after.body.tokens[0]?.lastUsedAt).toBeString();
});

test("bad input is a 400 and creates nothing", async () => {
  t = await authApp();
  const ann = await signUp(t, "ann@example.org");
  for (const body of [
    { name: "x", scopes: [] },
    { name: "x", scopes: ["admin"] },
    { name: "", scopes: ["chat"] },
    { name: "x", scopes: ["chat"], expiresInDays: 0 },
    { name: "x", scopes: ["chat"], expiresInDays: 1.5 },
    { name: "x", scopes: ["chat", "chat"] },
  ]) {
    const response = await t.request("/api/auth/tokens", postJson(body, ann.bearer));
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toBeString();
  }
  expect(await t.ctx.database.get("SELECT count(*) AS n FROM auth_tokens")).toEqual({ n: 0 });
});

test("scopes cover their family's routes and refuse the rest with 403 naming the scope", async () => {
  t = await authApp();
  const ann = await signUp(t, "ann@example.org");
  const reader = await createToken(t, ann, { name: "reader", scopes: ["search:read", "agents:read"] });
  const writer = await createToken(t, ann, { name: "writer", scopes: ["turns"] });

  expect((await get(t, "/search/indexes", reader.bearer)).status).toBe(200);
  expect((await get(t, "/v1/agents", reader.bearer)).status).toBe(200);
  const search = await t.request("/search/local", postJson({ query: "x" }, reader.bearer));
  expect(search.status).toBe(403);
  expect(((await search.json()) as { detail: string }).detail).toContain("'search'");
  const turns = await get(t, "/api/sessions", reader.bearer);
  expect(turns.status).toBe(403);
  expect(((await turns.json()) as { error: { code: string; message: string } }).error).toEqual({
    code: "insufficient_scope",
    message: expect.stringContaining("'turns:read'"),
  });
  const chatRead = await get(t, "/api/chat/sessions", reader.bearer);
  expect(chatRead.status).toBe(403);
  expect(((await chatRead.json()) as { message: string }).message).toContain("'chat:read'");
  // Refused before validation: a bad body to a route the token may not use is still the 403.
  expect((await t.request("/v1/agents", postJson({ nonsense: 1 }, reader.bearer))).status).toBe(403);

  // `turns` covers `turns:read` and the writes.
  expect((await get(t, "/api/sessions", writer.bearer)).status).toBe(200);
  const session = await t.request("/api/sessions", postJson({ title: "by token" }, writer.bearer));
  expect(session.status).toBe(200);
  expect((await get(t, "/v1/agents", writer.bearer)).status).toBe(403);
  // The MCP server needs `mcp`.
  const mcp = await t.request("/mcp", postJson({ jsonrpc: "2.0", id: 1, method: "ping" }, writer.bearer));
  expect(mcp.status).toBe(403);
  // Public routes stay open to any token.
  expect((await get(t, "/health", reader.bearer)).status).toBe(200);
});

test("a token sees only its owner's data; another user can neither list nor revoke it", async () => {
  t = await authApp();
  const ann = await signUp(t, "ann@example.org");
  const bob = await signUp(t, "bob@example.org");
  const annToken = await createToken(t, ann, { name: "ann", scopes: ["turns"] });
  const made = await t.json<{ id: string }>("/api/sessions", postJson({ title: "ann's" }, annToken.bearer));
  const bobToken = await createToken(t, bob, { name: "bob", scopes: ["turns"] });
  expect((await get(t, `/api/sessions/${made.body.id}`, bobToken.bearer)).status).toBe(404);
  expect((await get(t, `/api/sessions/${made.body.id}`, annToken.bearer)).status).toBe(200);

  const bobsList = await t.json<{ tokens: { id: string }[] }>("/api/auth/tokens", { headers: bob.bearer });
  expect(bobsList.body.tokens.map((x) => x.id)).toEqual([bobToken.id]);
  const revoke = await t.request(`/api/auth/tokens/${annToken.id}`, {
    method: "DELETE",
    headers: bob.bearer,
  });
  expect(revoke.status).toBe(404);
  expect((await get(t, "/api/sessions", annToken.bearer)).status).toBe(200);
});

test("a token neither manages tokens nor acts as an admin", async () => {
  t = await authApp();
  const admin = await signUp(t, "root@example.org");
  await t.ctx.auth?.accounts.update(admin.id, { admin: true });
  const token = await createToken(t, admin, { name: "all", scopes: ["chat", "turns", "search", "agents"] });
  const minted = await t.request(
    "/api/auth/tokens",
    postJson({ name: "wider", scopes: ["mcp"] }, token.bearer),
  );
  expect(minted.status).toBe(403);
  expect((await get(t, "/api/auth/tokens", token.bearer)).status).toBe(403);
  expect(
    (await t.request(`/api/auth/tokens/${token.id}`, { method: "DELETE", headers: token.bearer })).status,
  ).toBe(403);
  // The same account's session may create invites; its token may not.
  expect((await t.request("/api/auth/invites", postJson({}, admin.bearer))).status).toBe(200);
  expect((await t.request("/api/auth/invites", postJson({}, token.bearer))).status).toBe(403);
  // Nor may it read or edit the policy (turns-owned, admin only, loopback clients only).
  server = listen(t);
  expect((await fetch(`${server.url}/api/settings`, { headers: admin.bearer })).status).toBe(200);
  const policy = await fetch(`${server.url}/api/settings`, { headers: token.bearer });
  expect(policy.status).toBe(403);
  expect(((await policy.json()) as { error: { code: string } }).error.code).toBe("admin_required");
});

test("a revoked or expired token is 401 at once; a disabled account's tokens too", async () => {
  t = await authApp();
  const ann = await signUp(t, "ann@example.org");
  const revoked = await createToken(t, ann, { name: "r", scopes: ["turns:read"] });
  const expiring = await createToken(t, ann, { name: "e", scopes: ["turns:read"], expiresInDays: 30 });
  expect(Date.parse(expiring.expiresAt as string) - Date.now()).toBeGreaterThan(29 * 86_400_000);
  expect((await get(t, "/api/sessions", revoked.bearer)).status).toBe(200);
  const gone = await t.request(`/api/auth/tokens/${revoked.id}`, {
    method: "DELETE",
    headers: { ...ann.cookie, ...OWN_ORIGIN },
  });
  expect(gone.status).toBe(200);
  expect((await get(t, "/api/sessions", revoked.bearer)).status).toBe(401);

  expect((await get(t, "/api/sessions", expiring.bearer)).status).toBe(200);
  await t.ctx.database.run("UPDATE auth_tokens SET expires_at = ? WHERE id = ?", [
    Date.now() - 1,
    expiring.id,
  ]);
  expect((await get(t, "/api/sessions", expiring.bearer)).status).toBe(401);
  const listed = await t.json<{ tokens: { id: string; expired: boolean }[] }>("/api/auth/tokens", {
    headers: ann.bearer,
  });
  expect(listed.body.tokens).toEqual([expect.objectContaining({ id: expiring.id, expired: true })]);

  const live = await createToken(t, ann, { name: "l", scopes: ["turns:read"] });
  await t.ctx.auth?.setDisabled(ann.id, true);
  expect((await get(t, "/api/sessions", live.bearer)).status).toBe(401);
});

test("the WebSocket takes a token as auth_token, needs the full scope, and closes when it is revoked or expires", async () => {
  t = await authApp();
  server = listen(t);
  const ann = await signUp(t, "ann@example.org");
  const agent = await t.json<{ id: string }>(
    "/v1/agents",
    postJson({ name: "Helper", role: "helps" }, ann.bearer),
  );
  const reader = await createToken(t, ann, { name: "reader", scopes: ["agents:read"] });
  const query = { target_id: agent.body.id, target_type: "agent" };
  // agents:read is no WebSocket: the socket sends messages that write.
  const upgrade = await fetch(
    `${server.url}/v1/chat?${new URLSearchParams({ ...query, auth_token: reader.token })}`,
    {
      headers: {
        upgrade: "websocket",
        connection: "upgrade",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-version": "13",
      },
    },
  );
  expect(upgrade.status).toBe(403);

  const first = await createToken(t, ann, { name: "ws", scopes: ["agents"] });
  const socket = await socketChat(server.url, { ...query, auth_token: first.token });
  await socket.next((f) => f.type === "connected");
  const reply = await socket.ask("hello");
  expect(reply.at(-1)?.is_complete).toBe(true);
  await t.request(`/api/auth/tokens/${first.id}`, { method: "DELETE", headers: ann.bearer });
  expect((await socket.closed).code).toBe(4401);

  // Expiry is noticed by the once-a-second re-check of open connections.
  const second = await createToken(t, ann, { name: "ws2", scopes: ["agents"] });
  const other = await socketChat(server.url, { ...query, auth_token: second.token });
  await other.next((f) => f.type === "connected");
  await t.ctx.database.run("UPDATE auth_tokens SET expires_at = ? WHERE id = ?", [Date.now() - 1, second.id]);
  expect((await other.closed).code).toBe(4401);
});

test("bad bearer tokens count against the address's sign-in limit, then every token from it waits", async () => {
  t = await authApp();
  server = listen(t);
  const ann = await signUp(t, "ann@example.org");
  const good = await createToken(t, ann, { name: "good", scopes: ["turns:read"] });
  const forged = `atr_${good.id}_${"a".repeat(32)}`;
  for (let i = 0; i < 20; i++) {
    const response = await fetch(`${server.url}/api/sessions`, {
      headers: { authorization: `Bearer ${forged}` },
    });
    expect(response.status).toBe(401);
  }
  const limited = await fetch(`${server.url}/api/sessions`, {
    headers: { authorization: `Bearer ${forged}` },
  });
  expect(limited.status).toBe(429);
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  // Telling a good token from a bad one is the guess: refused too while the window is full.
  expect((await fetch(`${server.url}/api/sessions`, { headers: good.bearer })).status).toBe(429);
  // Bad session tokens as bearers are the same guesses.
  const counted = (await t.ctx.database.get(
    "SELECT count(*) AS n FROM auth_limit_hits WHERE key LIKE 'signin-address:%'",
  )) as { n: number };
  expect(counted.n).toBe(20);
});

test("a bad session token as a bearer counts too", async () => {
  t = await authApp();
  for (let i = 0; i < 3; i++) {
    const response = await t.request("/api/sessions", {
      headers: { authorization: `Bearer ${"a".repeat(24)}.${"b".repeat(24)}` },
    });
    expect(response.status).toBe(401);
  }
  const counted = (await t.ctx.database.get("SELECT count(*) AS n FROM auth_limit_hits")) as { n: number };
  expect(counted.n).toBe(3);
});

test("the token reaches no log line", async () => {
  const memory = memoryLogger();
  t = await authApp({ log: memory.log });
  const ann = await signUp(t, "ann@example.org");
  const created = await createToken(t, ann, { name: "quiet", scopes: ["turns"] });
  await get(t, "/api/sessions", created.bearer);
  await get(t, "/api/nothing-here", created.bearer);
  await t.request("/api/sessions/nope/turns", postJson({ text: "x" }, created.bearer));
  expect(memory.text()).not.toContain(created.token.split("_")[2] as string);
});

test("local mode has no token routes and needs no token", async () => {
  t = await createTestApp();
  expect((await t.request("/api/auth/tokens", postJson({ name: "x", scopes: ["chat"] }))).status).toBe(404);
  expect(
    (await t.request("/api/sessions", { headers: { authorization: "Bearer atr_nothing" } })).status,
  ).toBe(200);
});
