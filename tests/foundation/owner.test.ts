/**
 * The owner is resolved by the identity plugin, once: a routes plugin asks with `.guard({ owner: true })`
 * and its handlers get `owner: string`; no family keeps its own copy of that check.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { Elysia } from "elysia";
import type { CredentialResolver } from "../../server/auth/identity.ts";
import type { AppContext } from "../../server/context.ts";
import { createTestApp, REPO_ROOT, type TestApp } from "../helpers/app.ts";

/** `/api/auth/*` is a public route: the identity plugin lets anonymous requests through to it. */
const OWNER_PROBE = "/api/auth/__owner_probe";
const PUBLIC_PROBE = "/api/auth/__identity_probe";
const ownerProbe = (ctx: AppContext) =>
  new Elysia({ name: "test/owner-probe" })
    .use(ctx.identity)
    .get(PUBLIC_PROBE, ({ identity }) => ({ identity: identity?.id ?? null }))
    .guard({ owner: true })
    .get(OWNER_PROBE, ({ owner }) => ({ owner }));

const resolver: CredentialResolver = (request) =>
  request.headers.get("authorization") === "Bearer alice" ? { id: "alice", kind: "bearer" } : undefined;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("owner", () => {
  test("local mode: every owner route is the local user, whatever the headers say", async () => {
    t = await createTestApp({ plugins: [ownerProbe] });
    for (const headers of [{}, { authorization: "Bearer alice" }] as Record<string, string>[])
      expect((await t.json(OWNER_PROBE, { headers })).body).toEqual({ owner: "local" });
  });

  test("protected mode: the owner is the resolved identity's id", async () => {
    t = await createTestApp({ env: { APP_HOSTED: "1" }, resolvers: [resolver], plugins: [ownerProbe] });
    expect((await t.json(OWNER_PROBE, { headers: { authorization: "Bearer alice" } })).body).toEqual({
      owner: "alice",
    });
  });

  test("protected mode: a route that asks for an owner answers 401 to an anonymous caller even on a public path", async () => {
    t = await createTestApp({ env: { APP_HOSTED: "1" }, resolvers: [resolver], plugins: [ownerProbe] });
    // The public route itself stays open, with no identity.
    expect(await t.json(PUBLIC_PROBE)).toMatchObject({ status: 200, body: { identity: null } });
    const anonymous = await t.json(OWNER_PROBE);
    expect(anonymous.status).toBe(401);
  });

  test("no family routes file checks the identity by hand any more", () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (path.endsWith(".ts")) files.push(path);
      }
    };
    walk(join(REPO_ROOT, "server"));
    const handRolled = files
      .filter((file) => !file.endsWith(join("auth", "identity.ts")))
      .filter((file) => /ownerOf|if \(!identity\) throw/.test(readFileSync(file, "utf8")))
      .map((file) => relative(REPO_ROOT, file));
    expect(handRolled).toEqual([]);
  });
});
