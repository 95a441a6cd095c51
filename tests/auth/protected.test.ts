/**
 * Protected mode with real session auth, across every family: every route of the OpenAPI document that
 * is not public answers 401 without a credential (and with a forged session or access token), and never 401 with a valid
 * one; the WebSocket's auth_token carries a session token; policy edits need an admin.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { publicRoutes } from "../../server/auth/identity.ts";
import { chat } from "../helpers/agents.ts";
import type { TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { authApp, credentialsOf, PASSWORD, type SignedUser, signUp } from "./auth-app.ts";

let t: TestApp;
let ann: SignedUser;
let operations: { method: string; path: string }[];
/** One listener for the file: the surface guard learns the bound port once per app. */
let s: { url: string; stop(): Promise<void> };

beforeAll(async () => {
  t = await authApp();
  ann = await signUp(t, "ann@example.org");
  s = listen(t);
  const doc = (await (await t.request("/swagger/json")).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => ({
      method: method.toUpperCase(),
      path: path.replace(/\{[^}]+\}/g, "x"),
    })),
  );
});
afterAll(async () => {
  await s.stop();
  await t.close();
});

const call = (method: string, path: string, headers: Record<string, string> = {}) =>
  t.request(path, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: method === "GET" || method === "HEAD" ? undefined : "{}",
  });

describe("every documented route", () => {
  test("covers every family", () => {
    for (const prefix of ["/api/chat", "/api/sessions", "/search/", "/v1/agents", "/api/auth/"])
      expect({ prefix, found: operations.some((o) => o.path.startsWith(prefix)) }).toEqual({
        prefix,
        found: true,
      });
    expect(operations.length).toBeGreaterThan(60);
  });

  test("answers 401 without a credential, and with forged or garbage ones, on each non-public route", async () => {
    const forged = credentialsOf("nobody", `${"a".repeat(24)}.${"b".repeat(24)}`);
    const isPublicRoute = publicRoutes(t.ctx.routePolicies);
    const closed = operations.filter((o) => !isPublicRoute(o.method, o.path));
    expect(closed.length).toBeGreaterThan(50);
    const forgedAccess = { authorization: `Bearer atr_${"a".repeat(24)}_${"b".repeat(32)}` };
    for (const { method, path } of closed) {
      for (const headers of [
        {},
        forged.bearer,
        forged.cookie,
        forgedAccess,
        { authorization: "Bearer garbage" },
      ]) {
        // Bad bearer tokens count against the address's sign-in limit (tokens.test.ts): here each is a first try.
        await t.ctx.database.run("DELETE FROM auth_limit_hits");
        const response = await call(method, path, headers);
        expect({ method, path, headers, status: response.status }).toEqual({
          method,
          path,
          headers,
          status: 401,
        });
      }
    }
  });

  test("never answers 401 to a signed-in user (bearer token)", async () => {
    for (const { method, path } of operations) {
      // A wrong password is sign-in's 401; sign-out would end the session the walk uses.
      if (path === "/api/auth/sign-in/email" || path === "/api/auth/sign-out") continue;
      const response = await call(method, path, ann.bearer);
      expect({ method, path, status: response.status === 401 }).toEqual({ method, path, status: false });
    }
  });
});

describe("WebSocket auth_token", () => {
  test("a session token opens /v1/chat; a forged one and none are refused before the upgrade", async () => {
    const agent = await t.json<{ id: string }>("/v1/agents", {
      method: "POST",
      headers: { "content-type": "application/json", ...ann.bearer },
      body: JSON.stringify({ name: "Helper", role: "helps" }),
    });
    expect(agent.status).toBe(200);
    const query = { target_id: agent.body.id, target_type: "agent" };
    const ok = await chat(s.url, { ...query, auth_token: ann.token });
    expect((await ok.next((f) => f.type === "connected")).type).toBe("connected");
    ok.close();
    const upgrade = {
      upgrade: "websocket",
      connection: "Upgrade",
      "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
      "sec-websocket-version": "13",
    };
    const params = new URLSearchParams(query);
    for (const token of [undefined, `${"a".repeat(24)}.${"b".repeat(24)}`, "forged"]) {
      const q = token ? `${params}&auth_token=${token}` : `${params}`;
      const response = await fetch(`${s.url}/v1/chat?${q}`, { headers: upgrade });
      expect({ token, status: response.status }).toEqual({ token, status: 401 });
    }
  });
});

describe("/api/settings in protected mode", () => {
  test("a signed-in non-admin gets 403 even from loopback; an admin on loopback reads", async () => {
    const auth = t.ctx.auth;
    if (!auth) throw new Error("no auth");
    const root = await auth.createAccount({ email: "root@example.org", password: PASSWORD, admin: true });
    const admin = credentialsOf(root.id, (await auth.startSession(root.id)).token);
    const member = await fetch(`${s.url}/api/settings`, { headers: ann.bearer });
    expect(member.status).toBe(403);
    expect(((await member.json()) as { error: { code: string } }).error.code).toBe("admin_required");
    const patch = await fetch(`${s.url}/api/settings`, {
      method: "PATCH",
      headers: { "content-type": "application/json", ...ann.bearer },
      body: JSON.stringify({ revision: "x", updates: [] }),
    });
    expect(patch.status).toBe(403);
    const read = await fetch(`${s.url}/api/settings`, { headers: admin.bearer });
    expect(read.status).toBe(200);
    const { revision } = (await read.json()) as { revision: string };
    expect(typeof revision).toBe("string");
  });
});
