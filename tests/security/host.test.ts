/**
 * The Host allow-list (server/http/surface.ts), on its own: against DNS rebinding, a request is served
 * only when its Host is a loopback name, the bound address or a public origin's host. Each test sends
 * no Origin and no Fetch-Metadata, so nothing but the Host rule can refuse it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { PROBE_PATHS, probeRoutes } from "../helpers/probes.ts";
import { rawRequest, upgradeHeaders } from "../helpers/surface.ts";

const EVIL = "evil.example:8000";

describe("in process", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ plugins: [probeRoutes] });
  });
  afterAll(() => t.close());

  test("a foreign Host is 421 in each family's envelope, for reads and writes alike", async () => {
    const host = { host: EVIL };
    const chat = await t.json<{ message: string }>(PROBE_PATHS.chat, { headers: host });
    expect(chat.status).toBe(421);
    expect(chat.body.message).toContain("'evil.example:8000'");
    expect(chat.body.message).toContain("--public-origin");
    const turns = await t.json(PROBE_PATHS.turns, postJson({ query: "x" }, host));
    expect(turns).toMatchObject({ status: 421, body: { error: { code: "misdirected_request" } } });
    for (const path of [PROBE_PATHS.search, PROBE_PATHS.agents]) {
      const { status, body } = await t.json<{ detail: unknown }>(path, postJson({ query: "x" }, host));
      expect({ path, status, type: typeof body.detail }).toEqual({ path, status: 421, type: "string" });
    }
  });

  test("what a rebinding page would read or write is refused: providers, files, settings, data", async () => {
    const host = { host: EVIL };
    for (const path of ["/api/chat/providers", "/api/files", "/api/settings", "/v1/agents", "/", "/app/"]) {
      expect({ path, status: (await t.request(path, { headers: host })).status }).toEqual({
        path,
        status: 421,
      });
    }
    const write = await t.request(
      "/api/files/append",
      postJson({ path: "x.ts", content: "export default 1" }, host),
    );
    expect(write.status).toBe(421);
    expect((await t.json<{ items: unknown[] }>("/api/files")).body.items).toEqual([]);
  });

  test("names that only look local are foreign", async () => {
    for (const name of [
      "127.0.0.2",
      "localhost.evil.example",
      "127.0.0.1.nip.io",
      "0.0.0.0",
      "[::ffff:127.0.0.1]",
      "",
      "localhost:8000@evil.example",
    ]) {
      const response = await t.request(PROBE_PATHS.turns, { headers: { host: name } });
      expect({ name, status: response.status }).toEqual({ name, status: 421 });
    }
  });

  test("loopback names pass, with or without the port, in any letter case", async () => {
    for (const name of ["localhost", "127.0.0.1", "[::1]", "localhost:80", "LocalHost"]) {
      const response = await t.request(PROBE_PATHS.turns, { headers: { host: name } });
      expect({ name, status: response.status }).toEqual({ name, status: 200 });
    }
  });

  test("the orchestrator probes answer under any Host and say nothing else", async () => {
    for (const path of ["/health", "/health/ready"]) {
      const response = await t.request(path, { headers: { host: "10.1.2.3:8000" } });
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
    }
    for (const path of ["/api/health", "/health/nothing"]) {
      const response = await t.request(path, { headers: { host: "10.1.2.3:8000" } });
      expect({ path, status: response.status }).toEqual({ path, status: 421 });
    }
    expect((await t.request("/health", { method: "POST", headers: { host: EVIL } })).status).toBe(421);
  });
});

describe("a listening server", () => {
  let t: TestApp;
  let server: { url: string; stop(): Promise<void> };
  let port: number;
  beforeAll(async () => {
    t = await createTestApp({ plugins: [probeRoutes] });
    server = listen(t);
    port = Number(new URL(server.url).port);
  });
  afterAll(async () => {
    await server.stop();
    await t.close();
  });

  const statusFor = async (host: string) =>
    (await fetch(`${server.url}${PROBE_PATHS.turns}`, { headers: { host } })).status;

  test("loopback names with the bound port or none pass; another port or name is 421", async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      "localhost",
      "127.0.0.1",
    ]) {
      expect({ host, status: await statusFor(host) }).toEqual({ host, status: 200 });
    }
    for (const host of [`localhost:${port + 1}`, `127.0.0.1:1`, `evil.example:${port}`, "evil.example"]) {
      expect({ host, status: await statusFor(host) }).toEqual({ host, status: 421 });
    }
  });

  test("a WebSocket upgrade with a foreign Host is 421; with the server's own it opens", async () => {
    const evil = await rawRequest(port, {
      path: "/v1/chat",
      headers: upgradeHeaders(`evil.example:${port}`),
    });
    expect(evil.status).toBe(421);
    expect(JSON.parse(evil.body)).toEqual({ detail: expect.stringContaining("evil.example") });
    const own = await rawRequest(port, { path: "/v1/chat", headers: upgradeHeaders(`127.0.0.1:${port}`) });
    expect(own.status).toBe(101);
  });
});

describe("public origins", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      plugins: [probeRoutes],
      env: { APP_PUBLIC_ORIGINS: "https://atrium.example.com, http://lan.example:8080" },
    });
  });
  afterAll(() => t.close());

  test("their hosts join the allow-list, exactly as named; loopback still answers", async () => {
    for (const host of ["atrium.example.com", "lan.example:8080", "localhost", "127.0.0.1"]) {
      const response = await t.request(PROBE_PATHS.turns, { headers: { host } });
      expect({ host, status: response.status }).toEqual({ host, status: 200 });
    }
    for (const host of ["lan.example", "lan.example:8081", "atrium.example.com:8443", "example.com"]) {
      const response = await t.request(PROBE_PATHS.turns, { headers: { host } });
      expect({ host, status: response.status }).toEqual({ host, status: 421 });
    }
  });
});

test("a specific bound address is one of the server's names; a wildcard bind is not", async () => {
  const { SurfacePolicy } = await import("../../server/http/surface.ts");
  const request = (host: string) => new Request("http://x/api/files", { headers: { host } });
  const bound = new SurfacePolicy({ host: "192.168.7.9", publicOrigins: [] });
  expect(bound.check(request("192.168.7.9:8000"), 8000)).toBeUndefined();
  expect(bound.check(request("192.168.7.10:8000"), 8000)?.options.status).toBe(421);
  const wildcard = new SurfacePolicy({ host: "0.0.0.0", publicOrigins: [] });
  expect(wildcard.check(request("0.0.0.0:8000"), 8000)?.options.status).toBe(421);
  expect(wildcard.check(request("localhost:8000"), 8000)).toBeUndefined();
  const ipv6 = new SurfacePolicy({ host: "fd00::5", publicOrigins: [] });
  expect(ipv6.check(request("[fd00::5]:8000"), 8000)).toBeUndefined();
});
