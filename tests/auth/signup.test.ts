/** APP_AUTH_SIGNUP: open, invite (single-use codes an admin creates) and closed; admins and invites. */
import { afterEach, describe, expect, test } from "bun:test";
import { parseCli } from "../../server/config/cli.ts";
import { createEnvSource } from "../../server/config/env.ts";
import { loadConfig } from "../../server/config/index.ts";
import { postJson, REPO_ROOT, type TestApp } from "../helpers/app.ts";
import { authApp, credentialsOf, OWN_ORIGIN, PASSWORD, signUp } from "./auth-app.ts";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const signUpRequest = (app: TestApp, body: Record<string, unknown>) =>
  app.request("/api/auth/sign-up/email", postJson({ password: PASSWORD, ...body }));

test("closed: nobody signs up; accounts come from the CLI (the first one is an admin)", async () => {
  t = await authApp({ env: { APP_AUTH_SIGNUP: "closed" } });
  const refused = await signUpRequest(t, { email: "ann@example.org" });
  expect(refused.status).toBe(403);
  expect(await t.ctx.database.get("SELECT count(*) AS n FROM auth_accounts")).toEqual({ n: 0 });
  const first = await t.ctx.auth?.createAccount({ email: "root@example.org", password: PASSWORD });
  const second = await t.ctx.auth?.createAccount({ email: "ann@example.org", password: PASSWORD });
  expect(first?.admin).toBe(true);
  expect(second?.admin).toBe(false);
});

test("an email already taken: sign-up is the generic 400, the CLI's account creation a conflict; nothing is added", async () => {
  t = await authApp({ env: { APP_AUTH_SIGNUP: "open" } });
  expect((await signUpRequest(t, { email: "ann@example.org" })).status).toBe(200);
  const again = await signUpRequest(t, { email: " ANN@example.org" });
  expect(again.status).toBe(400);
  expect(((await again.json()) as { message: string }).message).toContain("Sign-up failed");
  const refused = await t.ctx.auth
    ?.createAccount({ email: "ann@example.org", password: PASSWORD })
    .catch((e) => e);
  expect(refused).toMatchObject({ message: "An account with this email already exists" });
  // The duplicate's users row went with its refused account (one transaction).
  expect(await t.ctx.database.get("SELECT count(*) AS n FROM auth_accounts")).toEqual({ n: 1 });
  expect(await t.ctx.database.get("SELECT count(*) AS n FROM users WHERE id <> 'local'")).toEqual({ n: 1 });
});

describe("invite", () => {
  test("is the default; sign-up needs a valid, unused, unexpired code, each usable once", async () => {
    t = await authApp({ env: { APP_AUTH_SIGNUP: "" } });
    expect(t.ctx.config.auth.signup).toBe("invite");
    const auth = t.ctx.auth;
    if (!auth) throw new Error("no auth");
    expect((await signUpRequest(t, { email: "ann@example.org" })).status).toBe(403);
    expect((await signUpRequest(t, { email: "ann@example.org", inviteCode: "inv_forged" })).status).toBe(400);
    const { code } = await auth.createInvite("cli");
    const ok = await signUpRequest(t, { email: "ann@example.org", inviteCode: code });
    expect(ok.status).toBe(200);
    expect((await ok.json()).user.admin).toBe(false);
    const again = await signUpRequest(t, { email: "bob@example.org", inviteCode: code });
    expect(again.status).toBe(400);
    // A refused sign-up leaves no account behind.
    expect(await auth.accounts.byEmail("bob@example.org")).toBeUndefined();
    const expired = await auth.createInvite("cli", { lifetimeMs: -1 });
    expect((await signUpRequest(t, { email: "bob@example.org", inviteCode: expired.code })).status).toBe(400);
    // The code itself is never stored.
    expect(JSON.stringify(await t.ctx.database.all("SELECT * FROM auth_invites"))).not.toContain(code);
  });

  test("an admin creates invites over the API (an admin invite makes an admin); others get 403", async () => {
    t = await authApp({ env: { APP_AUTH_SIGNUP: "invite" } });
    const auth = t.ctx.auth;
    if (!auth) throw new Error("no auth");
    const root = await auth.createAccount({ email: "root@example.org", password: PASSWORD });
    const rootSigned = credentialsOf(root.id, (await auth.startSession(root.id)).token);
    const anonymous = await t.request("/api/auth/invites", postJson({}));
    expect(anonymous.status).toBe(401);
    const made = await t.json<{ code: string; admin: boolean }>(
      "/api/auth/invites",
      postJson({ admin: true }, rootSigned.bearer),
    );
    expect(made.status).toBe(200);
    expect(made.body.admin).toBe(true);
    const ann = await signUp(t, "ann@example.org", { inviteCode: made.body.code });
    const me = await t.json<{ user: { admin: boolean } }>("/api/auth/get-session", { headers: ann.bearer });
    expect(me.body.user.admin).toBe(true);
    const plain = await t.json<{ code: string }>(
      "/api/auth/invites",
      postJson({}, { ...ann.cookie, ...OWN_ORIGIN }),
    );
    const bob = await signUp(t, "bob@example.org", { inviteCode: plain.body.code });
    const refused = await t.request("/api/auth/invites", postJson({}, bob.bearer));
    expect(refused.status).toBe(403);
  });
});

test("open: anyone signs up; a taken email gets the same answer as a bad invite (no account enumeration)", async () => {
  t = await authApp({ env: { APP_AUTH_SIGNUP: "open" } });
  await signUp(t, "ann@example.org");
  const taken = await signUpRequest(t, { email: "ANN@example.org" });
  expect(taken.status).toBe(400);
  expect((await taken.json()).message).toContain("Sign-up failed");
});

test("a bad APP_AUTH_SIGNUP or --trust-proxy stops startup with one clear line", () => {
  const cli = parseCli(["--data-dir", "/tmp/x"], {}, REPO_ROOT);
  if (cli.kind !== "serve") throw new Error("cli");
  expect(() => loadConfig(cli.options, createEnvSource({ APP_AUTH_SIGNUP: "everyone" }))).toThrow(
    "APP_AUTH_SIGNUP must be one of open, invite, closed",
  );
  expect(() => loadConfig({ ...cli.options, trustProxy: ["proxy.example"] }, createEnvSource({}))).toThrow(
    "--trust-proxy 'proxy.example'",
  );
});
