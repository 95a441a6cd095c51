/**
 * Managed auth: bearer JWTs verified against a local JWKS server (issuer, audience, expiry, algorithm,
 * key rotation), and /api/auth/* proxied to the managed service.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { managedResolver } from "../../server/auth/managed.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

type Key = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
const ISSUER = "https://auth.test";
const AUDIENCE = "atrium";

let jwks: { keys: JWK[] } = { keys: [] };
let fetches = 0;
const upstreamSeen: { method: string; path: string; body: string; cookie: string | null }[] = [];
let server: ReturnType<typeof Bun.serve>;
let base: string;
let keyA: Key;
let keyB: Key;
let keyBJwk: JWK;
let t: TestApp;

async function publicJwk(kid: string) {
  const pair = await generateKeyPair("ES256", { extractable: true });
  return {
    kid,
    privateKey: pair.privateKey,
    jwk: { ...(await exportJWK(pair.publicKey)), kid, alg: "ES256", use: "sig" },
  };
}

function sign(key: Key, kid: string, claims: Record<string, unknown> = {}, options: { exp?: string } = {}) {
  return new SignJWT({ email: "ann@example.org", ...claims })
    .setProtectedHeader({ alg: "ES256", kid })
    .setSubject((claims.sub as string) ?? "user-ann")
    .setIssuer((claims.iss as string) ?? ISSUER)
    .setAudience((claims.aud as string) ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(options.exp ?? "5m")
    .sign(key);
}

beforeAll(async () => {
  const a = await publicJwk("key-a");
  const b = await publicJwk("key-b");
  keyA = a.privateKey;
  keyB = b.privateKey;
  jwks = { keys: [a.jwk] };
  keyBJwk = b.jwk;
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname === "/.well-known/jwks.json") {
        fetches++;
        return Response.json(jwks);
      }
      upstreamSeen.push({
        method: request.method,
        path: `${url.pathname}${url.search}`,
        body: await request.text(),
        cookie: request.headers.get("cookie"),
      });
      return new Response(JSON.stringify({ ok: true }), {
        headers: {
          "content-type": "application/json",
          "set-cookie": "managed_session=abc; Path=/; HttpOnly",
        },
      });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
  t = await createTestApp({
    env: { APP_MANAGED_AUTH_URL: base, APP_MANAGED_AUTH_ISSUER: ISSUER, APP_MANAGED_AUTH_AUDIENCE: AUDIENCE },
  });
});
afterAll(async () => {
  await t.close();
  server.stop(true);
});

const asBearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

describe("bearer JWTs", () => {
  test("a valid token is the identity managed:<sub>; the JWKS is fetched once and cached", async () => {
    expect(t.ctx.config.mode.kind).toBe("protected");
    const token = await sign(keyA, "key-a");
    const before = fetches;
    for (let i = 0; i < 3; i++)
      expect((await t.request("/api/chat/sessions", asBearer(token))).status).toBe(200);
    expect(fetches - before).toBeLessThanOrEqual(1);
    // Data is keyed by the managed subject.
    await t.request("/api/chat/new", { method: "POST", ...asBearer(token) });
    const other = await sign(keyA, "key-a", { sub: "user-bob" });
    const bobs = await t.json<{ sessions: unknown[] }>("/api/chat/sessions", asBearer(other));
    expect(bobs.body.sessions).toEqual([]);
  });

  test("alg none, a wrong key, HMAC, expired, no exp, wrong or no audience, wrong issuer, no sub: all 401", async () => {
    const [header, payload] = (await sign(keyA, "key-a")).split(".");
    const none = `${Buffer.from(JSON.stringify({ alg: "none", kid: "key-a" })).toString("base64url")}.${payload}.`;
    const stranger = await generateKeyPair("ES256");
    const hmac = await new SignJWT({ sub: "x" })
      .setProtectedHeader({ alg: "HS256", kid: "key-a" })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("a-shared-secret-that-is-long-enough"));
    const forgedBody = `${header}.${Buffer.from(JSON.stringify({ sub: "admin", iss: ISSUER, aud: AUDIENCE, exp: 9e9 })).toString("base64url")}.${(await sign(keyA, "key-a")).split(".")[2]}`;
    const tokens = {
      none,
      wrongKey: await sign(stranger.privateKey, "key-a"),
      hmac,
      expired: await sign(keyA, "key-a", {}, { exp: "-1m" }),
      issuer: await sign(keyA, "key-a", { iss: "https://evil.test" }),
      audience: await sign(keyA, "key-a", { aud: "someone-else" }),
      noSub: await sign(keyA, "key-a", { sub: "" }),
      // Good for ever if it were accepted: a token must say when it expires.
      noExp: await new SignJWT({})
        .setProtectedHeader({ alg: "ES256", kid: "key-a" })
        .setSubject("user-ann")
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .sign(keyA),
      noAud: await new SignJWT({})
        .setProtectedHeader({ alg: "ES256", kid: "key-a" })
        .setSubject("user-ann")
        .setIssuer(ISSUER)
        .setExpirationTime("5m")
        .sign(keyA),
      forgedBody,
      garbage: "a.b.c",
    };
    for (const [name, token] of Object.entries(tokens)) {
      const status = (await t.request("/api/chat/sessions", asBearer(token))).status;
      expect({ name, status }).toEqual({ name, status: 401 });
    }
  });

  test("key rotation: a token signed with a new key is accepted once the JWKS lists it", async () => {
    const resolver = managedResolver({ baseUrl: base, issuer: ISSUER, audience: AUDIENCE, cooldownMs: 0 });
    const resolve = (request: Request) => resolver(request, { address: undefined, https: false });
    const request = (token: string) =>
      new Request("http://localhost/x", { headers: { authorization: `Bearer ${token}` } });
    expect(await resolve(request(await sign(keyA, "key-a")))).toMatchObject({ id: "managed:user-ann" });
    const rotated = await sign(keyB, "key-b");
    expect(await resolve(request(rotated))).toBeUndefined();
    jwks = { keys: [keyBJwk] };
    expect(await resolve(request(rotated))).toMatchObject({ id: "managed:user-ann" });
    // The retired key no longer verifies once the set was refetched without it.
    expect(await resolve(request(await sign(keyA, "key-a")))).toBeUndefined();
  });
});

describe("configuration", () => {
  test("a managed-auth server refuses to start without an audience, naming the variable", async () => {
    const started = createTestApp({ env: { APP_MANAGED_AUTH_URL: base, APP_MANAGED_AUTH_ISSUER: ISSUER } });
    await expect(started).rejects.toThrow(
      "APP_MANAGED_AUTH_AUDIENCE must be set when APP_MANAGED_AUTH_URL is",
    );
  });
});

describe("/api/auth/* proxy", () => {
  test("forwards method, path, query, body and cookies; passes Set-Cookie back", async () => {
    const response = await t.request(
      "/api/auth/sign-in/email?x=1",
      postJson({ email: "ann@example.org", password: "pw" }, { cookie: "managed_session=old" }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("set-cookie")).toContain("managed_session=abc");
    expect(upstreamSeen.at(-1)).toEqual({
      method: "POST",
      path: "/sign-in/email?x=1",
      body: JSON.stringify({ email: "ann@example.org", password: "pw" }),
      cookie: "managed_session=old",
    });
    const session = await t.request("/api/auth/get-session");
    expect(session.status).toBe(200);
    expect(upstreamSeen.at(-1)).toMatchObject({ method: "GET", path: "/get-session" });
  });
});
