/**
 * The auth scope's transactions (docs/database.md, "Transactions and their tests") on whichever engine the
 * app runs: an attempt counted under several limit keys, an account with its users row, and a sign-up
 * (account, invite redeemed, admin flag). Each is made to fail part-way by the database itself and
 * leaves nothing of itself behind. None emits an event (a sign-up's session starts after it commits).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { AccountStore } from "../../server/auth/account-store.ts";
import { LimitStore } from "../../server/auth/limit-store.ts";
import { authApp, PASSWORD } from "../auth/auth-app.ts";
import { postJson, type TestApp } from "../helpers/app.ts";
import { failingWith, REFUSED, refuseWrites, rows } from "../helpers/refuse-writes.ts";

let t: TestApp;
beforeAll(async () => {
  t = await authApp({ env: { APP_AUTH_SIGNUP: "invite" } });
});
afterAll(() => t.close());

test("LimitStore.reserve: one key's refused attempt counts the attempt under none of its keys", async () => {
  const limits = new LimitStore(t.ctx.database);
  const keys = [
    { key: "tx:a", limit: 5, windowMs: 60_000 },
    { key: "tx:b", limit: 5, windowMs: 60_000 },
  ];
  await failingWith(t.ctx.database, ["auth_limit_hits", "INSERT", "NEW.key = 'tx:b'"], () =>
    limits.reserve(keys),
  );
  expect(await rows(t.ctx.database, "auth_limit_hits", "key LIKE 'tx:%'")).toBe(0);
  expect(await limits.reserve(keys)).toMatchObject({ ok: true });
  expect(await rows(t.ctx.database, "auth_limit_hits", "key LIKE 'tx:%'")).toBe(2);
});

test("AccountStore.insert: a refused account leaves no users row", async () => {
  const accounts = new AccountStore(t.ctx.database);
  const account = {
    userId: "u_txacct",
    email: "tx@example.org",
    name: "tx",
    passwordHash: "h",
    admin: false,
  };
  await failingWith(t.ctx.database, ["auth_accounts", "INSERT"], () => accounts.insert(account));
  expect(await rows(t.ctx.database, "users", "id = ?", ["u_txacct"])).toBe(0);
  await accounts.insert(account);
  expect(await rows(t.ctx.database, "users", "id = ?", ["u_txacct"])).toBe(1);
});

test("sign-up with an admin invite: a failure at its last write leaves no account and the invite unused", async () => {
  const auth = t.ctx.auth;
  if (!auth) throw new Error("no auth");
  const { code } = await auth.createInvite("cli", { admin: true });
  const signUp = () =>
    t.request(
      "/api/auth/sign-up/email",
      postJson({ email: "inv@example.org", password: PASSWORD, inviteCode: code }),
    );
  // The account and the invite's redemption are written; making the account an admin is refused.
  const undo = await refuseWrites(t.ctx.database, "auth_accounts", "UPDATE");
  try {
    const refused = await signUp();
    expect(refused.status).toBe(500);
    expect(await refused.text()).not.toContain(REFUSED);
  } finally {
    await undo();
  }
  expect(await auth.accounts.byEmail("inv@example.org")).toBeUndefined();
  expect(await rows(t.ctx.database, "users", "display_name = ?", ["inv"])).toBe(0);
  expect(await rows(t.ctx.database, "auth_invites", "used_at IS NULL")).toBe(1);
  // The same invite still works once nothing refuses.
  const ok = await signUp();
  expect(ok.status).toBe(200);
  expect((await ok.json()).user.admin).toBe(true);
  expect(await rows(t.ctx.database, "auth_invites", "used_at IS NULL")).toBe(0);
});
