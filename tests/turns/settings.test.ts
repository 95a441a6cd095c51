/**
 * /api/settings over a real socket: the non-secret policy with its revision; PATCH in its three shapes,
 * validated against every profile and written atomically; a stale revision is 409; a non-loopback client
 * is 403; secrets are never returned; saved policy applies after a restart.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { createEnvSource } from "../../server/config/env.ts";
import { loadPolicy } from "../../server/config/policy.ts";
import type { TestApp } from "../helpers/app.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";
import { turnsApp } from "../helpers/turns.ts";

const SECRET = "sk-settings-secret-0123456789";
let t: TestApp & { policyPath: string };
let base: string;
let port: number;

beforeAll(async () => {
  // The database URL carries the secret as its password (the test cluster trusts loopback and ignores it).
  const database = (await freshPostgresDatabase()).replace(
    /^postgres:\/\/([^@]+)@/,
    `postgres://$1:${SECRET}@`,
  );
  t = await turnsApp({
    env: { APP_SANDBOX_WARM: "0", APP_MODEL_API_KEY: SECRET, APP_DATABASE_URL: database },
  });
  t.app.listen({ hostname: "0.0.0.0", port: 0, reusePort: false, development: false });
  port = t.app.server?.port as number;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await t.app.server?.stop(true);
  await t.close();
});

interface View {
  revision: string;
  profile: string;
  profiles: string[];
  effective: { rlm: { max_iters: number }; runtime: { heartbeat_seconds: number } };
  overrides: Record<string, unknown>;
  sandbox: { isolation: string };
}

const get = async () => {
  const r = await fetch(`${base}/api/settings`);
  return { status: r.status, text: await r.clone().text(), body: (await r.json()) as View };
};
const patch = async (body: unknown) => {
  const r = await fetch(`${base}/api/settings`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as View & { error?: { code: string; message: string } } };
};

describe("settings", () => {
  test("read: non-secret policy, revision, isolation; never a secret", async () => {
    const { status, text, body } = await get();
    expect(status).toBe(200);
    expect(body.profile).toBe("sandbox");
    expect(body.profiles).toContain("sandbox-recursive");
    expect(body.revision).toMatch(/^[0-9a-f]{64}$/);
    expect(body.effective.rlm.max_iters).toBe(12);
    expect(body.sandbox.isolation).toBe("bubblewrap");
    expect(text).not.toContain(SECRET);
  });

  test("single field, stale revision, batch with unset, profile selection; applies after restart", async () => {
    const first = await get();
    const single = await patch({
      revision: first.body.revision,
      scope: "sandbox",
      path: "rlm.max_iters",
      value: 20,
    });
    expect(single.status).toBe(200);
    expect(single.body.effective.rlm.max_iters).toBe(20);
    expect(single.body.revision).not.toBe(first.body.revision);
    // The running server keeps its policy until restart; a fresh load sees the change.
    expect(t.ctx.config.policy.settings.rlm.max_iters).toBe(12);
    expect(loadPolicy(t.policyPath, createEnvSource({})).settings.rlm.max_iters).toBe(20);

    const onDisk = readFileSync(t.policyPath, "utf8");
    const stale = await patch({
      revision: first.body.revision,
      scope: "sandbox",
      path: "rlm.max_iters",
      value: 30,
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error?.code).toBe("settings_revision_conflict");
    expect(readFileSync(t.policyPath, "utf8")).toBe(onDisk);

    const batch = await patch({
      revision: single.body.revision,
      updates: [
        { scope: "sandbox", path: "rlm.max_iters", unset: true },
        { scope: "defaults", path: "runtime.heartbeat_seconds", value: 3 },
      ],
    });
    expect(batch.status).toBe(200);
    expect(batch.body.effective.rlm.max_iters).toBe(12);
    expect(batch.body.effective.runtime.heartbeat_seconds).toBe(3);

    const selected = await patch({ revision: batch.body.revision, profile: "sandbox-recursive" });
    expect(selected.status).toBe(200);
    expect(selected.body.profile).toBe("sandbox-recursive");
    const reloaded = loadPolicy(t.policyPath, createEnvSource({}));
    expect(reloaded.profile).toBe("sandbox-recursive");
    expect(reloaded.settings.rlm.recursion_enabled).toBe(true);
    expect(reloaded.settings.runtime.heartbeat_seconds).toBe(3);
  });

  test("invalid edits are 422 and leave the file alone", async () => {
    const { body } = await get();
    const before = readFileSync(t.policyPath, "utf8");
    for (const bad of [
      { revision: body.revision, scope: "sandbox", path: "rlm.max_iters", value: -1 },
      { revision: body.revision, scope: "sandbox", path: "rlm.no_such_key", value: 1 },
      { revision: body.revision, scope: "sandbox", path: "tracing.trace_content_mode", value: "full" },
      { revision: body.revision, scope: "sandbox-bench", path: "rlm.max_iters", value: "many" },
      { revision: body.revision, scope: "nowhere", path: "rlm.max_iters", value: 3 },
      { revision: body.revision, updates: [{ scope: "defaults", path: "rlm.max_iters", unset: true }] },
      { revision: body.revision, profile: "no-such-profile" },
      { revision: body.revision },
    ]) {
      const r = await patch(bad);
      expect({ bad, status: r.status }).toEqual({ bad, status: 422 });
    }
    expect(readFileSync(t.policyPath, "utf8")).toBe(before);
  });

  test("a non-loopback client is refused, whatever the bind address", async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === "IPv4" && !i.internal)?.address;
    expect(external).toBeDefined();
    // Addressed by that IP, the Host allow-list answers first (421); with a loopback Host the request
    // reaches the route, whose own rule looks at the client's address, not at names.
    expect((await fetch(`http://${external}:${port}/api/settings`)).status).toBe(421);
    const host = `127.0.0.1:${port}`;
    const r = await fetch(`http://${external}:${port}/api/settings`, { headers: { host } });
    expect(r.status).toBe(403);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe("loopback_required");
    const p = await fetch(`http://${external}:${port}/api/settings`, {
      method: "PATCH",
      body: "{}",
      headers: { "content-type": "application/json", host },
    });
    expect(p.status).toBe(403);
    // Without a socket there is no client address to trust: refused too.
    expect((await t.request("/api/settings")).status).toBe(403);
  });
});
