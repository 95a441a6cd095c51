/**
 * Several instances on one database (issue 28, item 3): two apps on one data dir and one database (app.db,
 * or the PostgreSQL database of the run's cluster with ATRIUM_TEST_DATABASE=postgres) count the sign-in
 * and reindex limits together, accept each other's CSRF tokens and preview URLs (keys derived from
 * APP_AUTH_SECRET), and refuse a sandbox webhook body the other already took. Protected mode on
 * PostgreSQL without APP_AUTH_SECRET does not start.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHmac } from "node:crypto";
import { authStartError } from "../../server/auth/notes.ts";
import type { Mode } from "../../server/config/index.ts";
import { PreviewSigner } from "../../server/sandbox/users/preview.ts";
import { SandboxRegistry } from "../../server/sandbox/users/registry.ts";
import { memoryLogger, postJson, type TestApp } from "../helpers/app.ts";
import { finished, spawn } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";
import { authApp, databaseEnvOf, OWN_ORIGIN, PASSWORD, SECRET, signUp } from "./auth-app.ts";

setDefaultTimeout(60_000);

const apps: TestApp[] = [];
afterEach(async () => {
  // The second app shares the first's data dir, which the first removes: the second closes first.
  for (const app of apps.splice(0).reverse()) await app.close();
});

/** Instance A, and instance B on A's data dir and database. */
async function twoInstances(env: Record<string, string> = {}, log = memoryLogger().log) {
  const a = await authApp({ env, log });
  apps.push(a);
  const b = await authApp({ dataDir: a.dataDir, env: { ...databaseEnvOf(a), ...env }, log });
  apps.push(b);
  return [a, b] as const;
}

const signIn = (t: TestApp, email: string, password: string) =>
  t.request("/api/auth/sign-in/email", postJson({ email, password }));

describe("limits count together", () => {
  test("sign-in failures spread over A and B lock the account at the 5th, on both", async () => {
    const [a, b] = await twoInstances();
    await signUp(a, "ann@example.org");
    for (let i = 0; i < 5; i++)
      expect((await signIn(i % 2 ? b : a, "ann@example.org", `wrong-${i}-xx`)).status).toBe(401);
    expect((await signIn(b, "ann@example.org", PASSWORD)).status).toBe(429);
    expect((await signIn(a, "ann@example.org", PASSWORD)).status).toBe(429);
  });

  test("reindexes spread over A and B stop at 5 per minute", async () => {
    const [a, b] = await twoInstances();
    const ann = await signUp(a, "ann@example.org");
    const reindex = (t: TestApp) => t.request("/api/workspace/reindex", postJson({}, ann.bearer));
    for (let i = 0; i < 5; i++) expect((await reindex(i % 2 ? b : a)).status).toBe(200);
    expect((await reindex(a)).status).toBe(429);
    expect((await reindex(b)).status).toBe(429);
  });
});

describe("keys agree", () => {
  test("a CSRF token A issues passes B's check (and a forged one does not)", async () => {
    const [a, b] = await twoInstances();
    const ann = await signUp(a, "ann@example.org");
    const { csrfToken } = (
      await a.json<{ csrfToken: string }>("/api/workspace/reindex", { headers: ann.cookie })
    ).body;
    const post = (token: string) =>
      b.request(
        "/api/workspace/reindex",
        postJson(
          {},
          { ...OWN_ORIGIN, cookie: `${ann.cookie.cookie}; app_csrf=${token}`, "x-app-csrf-token": token },
        ),
      );
    expect((await post(csrfToken)).status).toBe(200);
    const forged = createHmac("sha256", "another-secret").update("x").digest("base64url");
    expect((await post(forged)).status).toBe(403);
  });

  test("a preview URL signed under APP_AUTH_SECRET is followed by either instance; another key's is 403", async () => {
    const [a, b] = await twoInstances();
    const ann = await signUp(a, "ann@example.org");
    const { token } = new PreviewSigner(SECRET).sign(ann.id, 3000);
    const { token: foreign } = new PreviewSigner("another-secret-0123456789abcdef").sign(ann.id, 3000);
    for (const t of [a, b]) {
      // Accepted: past the signature, the answer is that ann has no running sandbox (404), not 403.
      const follow = await t.request(`/api/sandbox/preview/${token}/`, { headers: ann.cookie });
      expect(follow.status).toBe(404);
      const refused = await t.request(`/api/sandbox/preview/${foreign}/`, { headers: ann.cookie });
      expect(refused.status).toBe(403);
    }
  });
});

describe("webhook replays", () => {
  test("a signed body B already applied is refused by A, and A's state stays as B left it", async () => {
    const logs = memoryLogger();
    const webhookSecret = "webhook-secret-for-tests";
    const [a, b] = await twoInstances({ SANDBOX_WEBHOOK_SECRET: webhookSecret }, logs.log);
    const registry = new SandboxRegistry(a.ctx.database);
    await registry.put("ann", "test", "sbx-ann", "started");
    const send = (t: TestApp, raw: string) =>
      t.request(
        "/api/webhooks/sandbox",
        postJson(raw, {
          "x-sandbox-signature": createHmac("sha256", webhookSecret).update(raw).digest("hex"),
        }),
      );
    const stop = JSON.stringify({ event: "stop", sandboxId: "sbx-ann", nonce: 1, timestamp: Date.now() });
    expect((await send(b, stop)).status).toBe(200);
    expect((await registry.of("ann"))?.state).toBe("stopped");
    await registry.setState("ann", "started");
    expect((await send(a, stop)).status).toBe(200);
    expect((await registry.of("ann"))?.state).toBe("started");
    expect(logs.text()).toContain("replayed");
  });
});

describe("start-up", () => {
  const config = (mode: "local" | "protected", secret?: string, databaseUrl?: string) => ({
    mode: (mode === "local" ? { kind: "local" } : { kind: "protected", reasons: ["test"] }) as Mode,
    auth: { secret } as never,
    policy: { secrets: { databaseUrl } } as never,
  });

  test("protected mode on PostgreSQL needs APP_AUTH_SECRET; SQLite, local mode or a secret do not refuse", () => {
    const url = "postgres://atrium@127.0.0.1:5432/atrium";
    expect(authStartError(config("protected", undefined, url))).toContain("APP_AUTH_SECRET");
    expect(authStartError(config("protected", SECRET, url))).toBeUndefined();
    expect(authStartError(config("protected"))).toBeUndefined();
    expect(authStartError(config("local", undefined, url))).toBeUndefined();
  });

  test("the server refuses with one line and exit code 1, before it touches the database", async () => {
    const data = tempDir();
    try {
      // Port 1 on loopback: nothing listens; the refusal comes before any connection is tried.
      const proc = spawn(["--data-dir", data.path, "--port", "0"], {
        env: {
          APP_CHAT_RUNTIME_REQUIRE_AUTH: "1",
          APP_MANAGED_AUTH_URL: "http://127.0.0.1:1",
          APP_MANAGED_AUTH_AUDIENCE: "atrium",
          APP_DATABASE_URL: "postgres://atrium@127.0.0.1:1/atrium",
        },
      });
      const { code, stdout, stderr } = await finished(proc);
      expect(code).toBe(1);
      expect(stdout).toBe("");
      expect(stderr).toBe(
        "atrium: protected mode on PostgreSQL needs APP_AUTH_SECRET: every instance on the database must sign CSRF tokens and preview URLs with the same key (set the same long random value on each).\n",
      );
    } finally {
      data.remove();
    }
  });
});
