/**
 * POST /api/webhooks/sandbox: lifecycle events change a user's sandbox state only with a valid
 * HMAC-SHA256 signature of the raw body, once (replays and stale timestamps are ignored); everything
 * else is 200, logged and ignored; a signed body that cannot be processed is 500.
 */
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { SandboxRegistry } from "../../server/sandbox/users/registry.ts";
import { createTestApp, memoryLogger, postJson, type TestApp } from "../helpers/app.ts";

const SECRET = "webhook-secret-for-tests";
let t: TestApp;
let registry: SandboxRegistry;
const logs = memoryLogger();

beforeAll(async () => {
  t = await createTestApp({
    env: { APP_CHAT_RUNTIME_REQUIRE_AUTH: "1", SANDBOX_WEBHOOK_SECRET: SECRET },
    log: logs.log,
  });
  registry = new SandboxRegistry(t.ctx.database);
});
afterAll(() => t.close());
beforeEach(() => registry.put("ann", "test", "sbx-ann", "started"));

const sign = (raw: string, secret = SECRET) => createHmac("sha256", secret).update(raw).digest("hex");
let counter = 0;
/** A fresh event body (unique, so the replay guard does not take it for an earlier one), stamped now. */
const event = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ event: name, sandboxId: "sbx-ann", nonce: ++counter, timestamp: Date.now(), ...extra });
const send = (raw: string, signature?: string) =>
  t.request(
    "/api/webhooks/sandbox",
    postJson(raw, signature === undefined ? {} : { "x-sandbox-signature": signature }),
  );
const state = async () => (await registry.of("ann"))?.state;

test("a signed event updates the state, without any user credential (public route in protected mode)", async () => {
  for (const [name, expected] of [
    ["stop", "stopped"],
    ["sandbox.started", "started"],
    ["archive", "archived"],
    ["delete", "deleted"],
  ] as const) {
    const raw = event(name);
    const response = await send(raw, sign(raw));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(await state()).toBe(expected);
  }
  const raw = event("stop");
  expect((await send(raw, `sha256=${sign(raw).toUpperCase()}`)).status).toBe(200);
  expect(await state()).toBe("stopped");
});

test("missing, wrong-key, tampered or truncated signatures are 200, logged and ignored", async () => {
  const raw = event("stop");
  const tampered = raw.replace("stop", "delete");
  for (const [body, signature] of [
    [raw, undefined],
    [raw, ""],
    [raw, sign(raw, "another-secret")],
    [tampered, sign(raw)],
    [raw, sign(raw).slice(0, 32)],
    [raw, "x".repeat(10_000)],
  ] as const) {
    const response = await send(body, signature);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(await state()).toBe("started");
  }
  expect(logs.text()).toContain("missing or invalid signature");
  expect(logs.text()).not.toContain(SECRET);
});

test("a replayed body and a stale timestamp are ignored", async () => {
  const raw = event("stop");
  await send(raw, sign(raw));
  expect(await state()).toBe("stopped");
  await registry.setState("ann", "started");
  expect((await send(raw, sign(raw))).status).toBe(200);
  expect(await state()).toBe("started");
  const stale = event("stop", { timestamp: new Date(Date.now() - 60 * 60 * 1000).toISOString() });
  expect((await send(stale, sign(stale))).status).toBe(200);
  expect(await state()).toBe("started");
  const fresh = event("stop", { timestamp: Math.floor(Date.now() / 1000) });
  await send(fresh, sign(fresh));
  expect(await state()).toBe("stopped");
  expect(logs.text()).toContain("replayed");
});

test("a signed body without a timestamp is ignored: it could otherwise be replayed once the replay memory forgot it", async () => {
  for (const timestamp of [undefined, null, "", "not a date", Number.NaN]) {
    const raw = JSON.stringify({ event: "stop", sandboxId: "sbx-ann", nonce: ++counter, timestamp });
    const response = await send(raw, sign(raw));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(await state()).toBe("started");
  }
  expect(logs.text()).toContain("no timestamp");
});

test("unknown events and unknown sandboxes are 200 and change nothing", async () => {
  for (const raw of [
    event("explode"),
    event("stop", { sandboxId: "sbx-nobody" }),
    JSON.stringify({ event: "stop" }),
  ]) {
    const response = await send(raw, sign(raw));
    expect(response.status).toBe(200);
    expect(await state()).toBe("started");
  }
});

test("a signed body that is not a JSON object is 500 Webhook processing failed", async () => {
  for (const raw of ["{not json", "[1,2]", '"text"', `{"a":${"[".repeat(100)}${"]".repeat(100)}}`]) {
    const response = await send(raw, sign(raw));
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: "Webhook processing failed" });
  }
  expect(await state()).toBe("started");
});

test("oversized bodies are refused before they are read; non-JSON types are 415", async () => {
  const huge = event("stop", { pad: "x".repeat(70_000) });
  const response = await send(huge, sign(huge));
  expect(response.status).toBe(413);
  expect(await state()).toBe("started");
  const form = await t.request("/api/webhooks/sandbox", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "event=stop",
  });
  expect(form.status).toBe(415);
});
