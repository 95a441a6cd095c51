/** Session auth end to end through the real app: sign-up, sign-in, tokens, cookies, expiry, sign-out. */
import { afterEach, describe, expect, test } from "bun:test";
import { sha256 } from "@oslojs/crypto/sha2";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { authApp, credentialsOf, OWN_ORIGIN, PASSWORD, signUp } from "./auth-app.ts";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const signIn = (app: TestApp, email: string, password = PASSWORD, headers: Record<string, string> = {}) =>
  app.request("/api/auth/sign-in/email", postJson({ email, password }, headers));

describe("sign-up and sign-in", () => {
  test("sign-up answers a token and sets an HttpOnly SameSite=Strict cookie (not Secure over http)", async () => {
    t = await authApp();
    const response = await t.request(
      "/api/auth/sign-up/email",
      postJson({ email: "Ann@Example.org", password: PASSWORD }),
    );
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.token).toMatch(/^[a-z2-7]{24}\.[a-z2-7]{24}$/);
    expect(body.user).toMatchObject({ email: "ann@example.org", name: "ann", admin: false });
    const cookie = response.headers.get("set-cookie") ?? "";
    expect(cookie).toStartWith(`atrium_session=${body.token};`);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/");
    expect(cookie).not.toContain("Secure");
  });

  test("only a hash of the secret is stored; the password is an argon2id hash", async () => {
    t = await authApp();
    const ann = await signUp(t, "ann@example.org");
    const [id, secret] = ann.token.split(".") as [string, string];
    const row = (await t.ctx.database.get("SELECT * FROM auth_sessions WHERE id = ?", [id])) as {
      secret_hash: Uint8Array;
    };
    expect(Buffer.from(row.secret_hash)).toEqual(Buffer.from(sha256(new TextEncoder().encode(secret))));
    const dump = JSON.stringify(await t.ctx.database.all("SELECT * FROM auth_sessions"));
    expect(dump).not.toContain(secret);
    const account = (await t.ctx.database.get("SELECT password_hash FROM auth_accounts")) as {
      password_hash: string;
    };
    expect(account.password_hash).toStartWith("$argon2id$");
    expect(account.password_hash).not.toContain(PASSWORD);
  });

  test("the token works as a bearer token and as the cookie; without it protected routes answer 401", async () => {
    t = await authApp();
    const ann = await signUp(t, "ann@example.org");
    expect((await t.request("/api/chat/sessions")).status).toBe(401);
    expect((await t.request("/api/chat/sessions", { headers: ann.bearer })).status).toBe(200);
    expect((await t.request("/api/chat/sessions", { headers: ann.cookie })).status).toBe(200);
    const me = await t.json<{ user: { id: string } }>("/api/auth/get-session", { headers: ann.cookie });
    expect(me.body.user.id).toBe(ann.id);
  });

  test("wrong password, unknown account and disabled account are the same generic 401", async () => {
    t = await authApp();
    const ann = await signUp(t, "ann@example.org");
    const wrong = await signIn(t, "ann@example.org", "not the password");
    const unknown = await signIn(t, "nobody@example.org", "not the password");
    await t.ctx.auth?.setDisabled(ann.id, true);
    const disabled = await signIn(t, "ann@example.org");
    for (const response of [wrong, unknown, disabled]) {
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ message: "Invalid email or password" });
      expect(response.headers.get("set-cookie")).toBeNull();
    }
    // Disabling also ended the session she had.
    expect((await t.request("/api/chat/sessions", { headers: ann.bearer })).status).toBe(401);
  });

  test("sign-in answers a fresh session; sign-out ends it and clears the cookie", async () => {
    t = await authApp();
    await signUp(t, "ann@example.org");
    const response = await signIn(t, "ANN@example.org ");
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.redirect).toBe(false);
    const ann = credentialsOf(body.user.id, body.token);
    expect((await t.request("/api/chat/sessions", { headers: ann.bearer })).status).toBe(200);
    const out = await t.request("/api/auth/sign-out", {
      method: "POST",
      headers: { ...ann.cookie, ...OWN_ORIGIN },
    });
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ success: true });
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await t.request("/api/chat/sessions", { headers: ann.bearer })).status).toBe(401);
    const after = await t.request("/api/auth/get-session", { headers: ann.cookie });
    expect(await after.json()).toBeNull();
  });

  test("bad sign-up input is a 400 in the chat envelope, never a 500", async () => {
    t = await authApp();
    for (const body of [
      { email: "not-an-email", password: PASSWORD },
      { email: "a@b.c", password: "short" },
      { email: "a@b.c" },
      { email: 5, password: PASSWORD },
      { email: "a@b.c", password: "x".repeat(300) },
    ]) {
      const response = await t.request("/api/auth/sign-up/email", postJson(body));
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(typeof (await response.json()).message).toBe("string");
    }
  });
});

describe("the cookie's name follows the scheme", () => {
  const HTTPS = "https://localhost";
  const overHttps = (app: TestApp, path: string, init: RequestInit = {}) =>
    app.app.handle(new Request(`${HTTPS}${path}`, init));

  test("over HTTPS the session cookie is __Host- prefixed, and only that name is read there", async () => {
    // The server's public origin is https (as behind TLS), so its pages' Origin passes the guard.
    t = await authApp({ args: ["--public-origin", HTTPS] });
    const app = t;
    const response = await overHttps(
      app,
      "/api/auth/sign-up/email",
      postJson({ email: "ann@example.org", password: PASSWORD }, { origin: HTTPS }),
    );
    expect(response.status).toBe(200);
    const { token } = await response.json();
    const cookie = response.headers.get("set-cookie") ?? "";
    expect(cookie).toStartWith(`__Host-atrium_session=${token};`);
    // What the prefix demands: Secure, Path=/ and no Domain (else browsers drop the cookie).
    expect(cookie).toContain("; Secure");
    expect(cookie).toContain("; Path=/");
    expect(cookie).not.toContain("Domain");
    const session = (name: string, over = overHttps) =>
      over(app, "/api/auth/get-session", { headers: { cookie: `${name}=${token}` } }).then((r) => r.json());
    const sessions = (name: string, over = overHttps) =>
      over(app, "/api/chat/sessions", { headers: { cookie: `${name}=${token}` } }).then((r) => r.status);
    expect((await session("__Host-atrium_session"))?.user?.email).toBe("ann@example.org");
    expect(await sessions("__Host-atrium_session")).toBe(200);
    // A plain-named cookie (one a sibling subdomain or a plain-HTTP answer could have planted) is not
    // read over HTTPS.
    expect(await session("atrium_session")).toBeNull();
    expect(await sessions("atrium_session")).toBe(401);
    // Over plain HTTP the plain name is the one (a __Host- cookie cannot come from there).
    const overHttp = (a: TestApp, path: string, init?: RequestInit) => a.request(path, init);
    expect(await sessions("atrium_session", overHttp)).toBe(200);
    expect(await sessions("__Host-atrium_session", overHttp)).toBe(401);
    // Sign-out over HTTPS ends the session and clears the __Host- cookie.
    const out = await overHttps(app, "/api/auth/sign-out", {
      method: "POST",
      headers: { cookie: `__Host-atrium_session=${token}`, origin: HTTPS },
    });
    expect(out.headers.get("set-cookie")).toStartWith("__Host-atrium_session=;");
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect(await sessions("__Host-atrium_session")).toBe(401);
  });
});

describe("forged, tampered and expired credentials", () => {
  test("a well-formed random token, a tampered secret and garbage are all 401", async () => {
    t = await authApp();
    const ann = await signUp(t, "ann@example.org");
    const [id, secret] = ann.token.split(".") as [string, string];
    const flipped = `${id}.${secret.slice(0, -1)}${secret.endsWith("a") ? "b" : "a"}`;
    for (const token of [
      `${"a".repeat(24)}.${"b".repeat(24)}`,
      flipped,
      `${id}.`,
      "garbage",
      `${id}.${secret}x`,
    ]) {
      const forms: Record<string, string>[] = [
        { authorization: `Bearer ${token}` },
        { cookie: `atrium_session=${token}` },
      ];
      for (const headers of forms) {
        const response = await t.request("/api/chat/sessions", { headers });
        expect({ token, status: response.status }).toEqual({ token, status: 401 });
      }
    }
  });

  test("an expired session is refused and removed; a half-spent one slides forward", async () => {
    t = await authApp();
    const ann = await signUp(t, "ann@example.org");
    const bob = await signUp(t, "bob@example.org");
    const day = 24 * 60 * 60 * 1000;
    const set = (token: string, expires: number) =>
      t?.ctx.database.run("UPDATE auth_sessions SET expires_at = ? WHERE id = ?", [
        expires,
        token.split(".")[0] as string,
      ]);
    await set(ann.token, Date.now() - 1000);
    expect((await t.request("/api/chat/sessions", { headers: ann.bearer })).status).toBe(401);
    expect(
      await t.ctx.database.get("SELECT count(*) AS n FROM auth_sessions WHERE user_id = ?", [ann.id]),
    ).toEqual({ n: 0 });

    await set(bob.token, Date.now() + 10 * day);
    expect((await t.request("/api/chat/sessions", { headers: bob.bearer })).status).toBe(200);
    const row = (await t.ctx.database.get("SELECT expires_at FROM auth_sessions WHERE user_id = ?", [
      bob.id,
    ])) as {
      expires_at: number;
    };
    expect(row.expires_at).toBeGreaterThan(Date.now() + 29 * day);
  });
});

describe("CSRF: cookie-authenticated mutations", () => {
  test("need an Origin header; a foreign Origin is refused; bearer callers need none", async () => {
    const app = await authApp();
    t = app;
    const ann = await signUp(app, "ann@example.org");
    const post = (headers: Record<string, string>) =>
      app.request("/api/chat/new", { method: "POST", headers });
    const noOrigin = await post(ann.cookie);
    expect(noOrigin.status).toBe(403);
    expect((await noOrigin.json()).message).toContain("Origin");
    expect((await post({ ...ann.cookie, origin: "https://evil.example" })).status).toBe(403);
    expect((await post({ ...ann.cookie, ...OWN_ORIGIN })).status).toBe(200);
    expect((await post(ann.bearer)).status).toBe(200);
    // Reads with the cookie need no Origin.
    expect((await app.request("/api/chat/sessions", { headers: ann.cookie })).status).toBe(200);
  });
});

describe("modes", () => {
  test("without APP_AUTH_SECRET there is no session auth: /api/auth/* is not served", async () => {
    t = await createTestApp({ env: { APP_CHAT_RUNTIME_REQUIRE_AUTH: "1" } });
    const response = await t.request(
      "/api/auth/sign-up/email",
      postJson({ email: "a@b.c", password: PASSWORD }),
    );
    expect(response.status).toBe(404);
    expect(t.ctx.auth).toBeUndefined();
  });

  test("in local mode a token is ignored: every request is the local user", async () => {
    t = await authApp({ env: { APP_CHAT_RUNTIME_REQUIRE_AUTH: "" } });
    expect(t.ctx.config.mode.kind).toBe("local");
    const ann = await signUp(t, "ann@example.org");
    const anonymous = await t.json<{ sessions: unknown[] }>("/api/chat/sessions");
    expect(anonymous.status).toBe(200);
    const created = await t.json<{ sessionId: string }>("/api/chat/new", {
      method: "POST",
      headers: ann.bearer,
    });
    expect(created.status).toBe(200);
    // The session the token's holder created is the local user's.
    const list = await t.json<{ sessions: { id: string }[] }>("/api/chat/sessions");
    expect(list.body.sessions.length).toBe(1);
  });
});
