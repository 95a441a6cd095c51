/**
 * The remote provider as the server wires it: `SANDBOX_API_KEY` selects it, the preview route hands out
 * the server's own signed URL, and following it reaches the provider's preview link with the provider's
 * token, never the user's cookie or bearer, and never the server's API key.
 */
import { afterEach, expect, test } from "bun:test";
import { RemoteSandboxProvider } from "../../server/sandbox/users/remote.ts";
import { authApp, OWN_ORIGIN, signUp } from "../auth/auth-app.ts";
import type { TestApp } from "../helpers/app.ts";
import { type FakeDaytona, startFakeDaytona } from "../helpers/daytona.ts";

let t: TestApp | undefined;
let daytona: FakeDaytona | undefined;
let site: ReturnType<typeof Bun.serve> | undefined;
afterEach(async () => {
  await t?.close();
  await daytona?.stop();
  await site?.stop(true);
  t = daytona = site = undefined;
});

test("SANDBOX_API_KEY selects the remote provider; a preview reaches its link with its token and no credentials", async () => {
  const seen: { path: string; headers: Record<string, string> }[] = [];
  site = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => {
        headers[name] = value;
      });
      seen.push({ path: url.pathname + url.search, headers });
      return new Response(`<h1>preview of ${url.pathname}</h1>`, { headers: { "set-cookie": "a=b" } });
    },
  });
  daytona = startFakeDaytona({ previewUrl: (port) => `http://127.0.0.1:${site?.port}/p${port}/` });
  t = await authApp({ env: { SANDBOX_API_KEY: "test-key", SANDBOX_API_URL: daytona.apiUrl } });
  const sandboxes = t.family("chat").runtime.sandboxes;
  expect(sandboxes).toBeInstanceOf(RemoteSandboxProvider);

  const ann = await signUp(t, "ann@example.org");
  const link = await t.json<{ url: string }>("/api/sandbox/preview?port=5173", { headers: ann.cookie });
  expect(link.status).toBe(200);
  expect(daytona.sandboxes.size).toBe(1);
  const followed = await t.request(`${new URL(link.body.url).pathname}docs/page?x=1`, {
    headers: { ...ann.cookie, authorization: `Bearer ${ann.token}` },
  });
  expect(followed.status).toBe(200);
  expect(await followed.text()).toBe("<h1>preview of /p5173/docs/page</h1>");
  expect(followed.headers.get("set-cookie")).toBeNull();
  expect(followed.headers.get("content-security-policy")).toContain("sandbox");
  const [request] = seen;
  expect(request?.path).toBe("/p5173/docs/page?x=1");
  const sandboxId = [...daytona.sandboxes.keys()][0];
  expect(request?.headers["x-daytona-preview-token"]).toBe(`tok-${sandboxId}`);
  expect(request?.headers.cookie).toBeUndefined();
  expect(request?.headers.authorization).toBeUndefined();
  expect(JSON.stringify(request?.headers)).not.toContain("test-key");
  expect(request?.headers.host).toBe(`127.0.0.1:${site.port}`);
});

test("a previewed page's own form posts (opaque origin, any body type, no session) reach its sandbox; the app's routes still refuse them", async () => {
  const seen: { method: string; type: string | null; body: string }[] = [];
  site = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      seen.push({
        method: request.method,
        type: request.headers.get("content-type"),
        body: await request.text(),
      });
      return new Response("saved");
    },
  });
  daytona = startFakeDaytona({ previewUrl: (port) => `http://127.0.0.1:${site?.port}/p${port}/` });
  t = await authApp({ env: { SANDBOX_API_KEY: "test-key", SANDBOX_API_URL: daytona.apiUrl } });
  const ann = await signUp(t, "ann@example.org");
  const link = await t.json<{ url: string }>("/api/sandbox/preview?port=5173", { headers: ann.cookie });
  expect(link.status).toBe(200);
  // What a page in a CSP sandbox sends: Origin null, a form type, no cookie, no bearer.
  const page = { origin: "null", "sec-fetch-site": "same-origin" };
  const posted = await t.request(`${new URL(link.body.url).pathname}form`, {
    method: "POST",
    headers: { ...page, "content-type": "application/x-www-form-urlencoded" },
    body: "name=ann&note=hi",
  });
  expect({ status: posted.status, text: await posted.text() }).toEqual({ status: 200, text: "saved" });
  const put = await t.request(`${new URL(link.body.url).pathname}notes/1`, {
    method: "PUT",
    headers: { ...page, "content-type": "text/plain" },
    body: "plain words",
  });
  expect(put.status).toBe(200);
  expect(seen).toEqual([
    { method: "POST", type: "application/x-www-form-urlencoded", body: "name=ann&note=hi" },
    { method: "PUT", type: "text/plain", body: "plain words" },
  ]);
  // The same request to an app route is refused by the origin rule, then by identity and body type.
  const app = await t.request("/api/chat/new", {
    method: "POST",
    headers: { ...page, ...ann.cookie, "content-type": "application/x-www-form-urlencoded" },
    body: "x=1",
  });
  expect(app.status).toBe(403);
  const noOrigin = await t.request("/api/chat/new", {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: "x",
  });
  expect(noOrigin.status).toBe(401);
});

test("bring your own key: with APP_SANDBOX_PROVIDER=remote and no server key, a user's stored key enables their sandbox only", async () => {
  daytona = startFakeDaytona({ keys: ["ann-key"] });
  t = await authApp({ env: { APP_SANDBOX_PROVIDER: "remote", SANDBOX_API_URL: daytona.apiUrl } });
  const ann = await signUp(t, "ann@example.org");
  const bob = await signUp(t, "bob@example.org");
  expect(await t.json("/api/sandbox/preview", { headers: ann.bearer })).toMatchObject({
    status: 503,
    body: { error: "Sandbox not available" },
  });

  const settings = await t.request("/api/sandbox/settings", { headers: ann.cookie });
  const { csrfToken, ...shown } = await settings.json();
  expect(shown).toEqual({ provider: "remote", sandboxApiKeyConfigured: false, serverKeyConfigured: false });
  const save = (headers: Record<string, string>, sandboxApiKey: string | null = "ann-key") =>
    t?.request("/api/sandbox/settings", {
      method: "POST",
      headers: { "content-type": "application/json", ...OWN_ORIGIN, ...headers },
      body: JSON.stringify({ sandboxApiKey }),
    }) as Promise<Response>;
  // A cookie caller without the CSRF token (or with another user's) changes nothing.
  const bobToken = (await (await t.request("/api/sandbox/settings", { headers: bob.cookie })).json())
    .csrfToken;
  for (const token of [undefined, bobToken]) {
    const headers = token
      ? { cookie: `${ann.cookie.cookie}; app_csrf=${token}`, "x-app-csrf-token": token }
      : ann.cookie;
    expect((await save(headers)).status).toBe(403);
  }
  expect(
    (await save({ cookie: `${ann.cookie.cookie}; app_csrf=${csrfToken}`, "x-app-csrf-token": csrfToken }))
      .status,
  ).toBe(200);
  const after = await (await t.request("/api/sandbox/settings", { headers: ann.bearer })).json();
  expect(after.sandboxApiKeyConfigured).toBe(true);
  expect(JSON.stringify(after)).not.toContain("ann-key");

  const link = await t.json<{ url: string }>("/api/sandbox/preview", { headers: ann.bearer });
  expect(link.status).toBe(200);
  const created = daytona.requests.filter((r) => r.method === "POST" && r.path.endsWith("/sandbox"));
  expect(created.map((r) => r.authorization)).toEqual(["Bearer ann-key"]);
  // Bob stored nothing: still no sandbox for him.
  expect((await t.json("/api/sandbox/preview", { headers: bob.bearer })).status).toBe(503);
  // The sandbox key is not a model provider key: it never reaches pi with them.
  const providers = await t.json<{ providers: { id: string }[] }>("/api/chat/providers", {
    headers: ann.bearer,
  });
  expect(JSON.stringify(providers.body)).not.toContain("sandbox");
  // Cleared: gone again.
  expect((await save(ann.bearer, null)).status).toBe(200);
  expect((await t.json("/api/sandbox/preview", { headers: ann.bearer })).status).toBe(503);
});

test("a local sandbox needs no key: storing one is refused with 409 and nothing is kept", async () => {
  t = await authApp();
  const ann = await signUp(t, "ann@example.org");
  const response = await t.request("/api/sandbox/settings", {
    method: "POST",
    headers: { "content-type": "application/json", ...ann.bearer },
    body: JSON.stringify({ sandboxApiKey: "k" }),
  });
  expect(response.status).toBe(409);
  expect(
    (await (await t.request("/api/sandbox/settings", { headers: ann.bearer })).json())
      .sandboxApiKeyConfigured,
  ).toBe(false);
});
