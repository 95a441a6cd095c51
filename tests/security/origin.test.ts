/**
 * The Origin check (server/http/surface.ts), each rule on its own: POST, PUT, PATCH, DELETE and
 * WebSocket upgrades from a page of another origin are 403, whether the browser says so with `Origin`
 * alone (a plain-http page sends no Fetch-Metadata; a page on another 127.0.0.1 port is `same-site`) or
 * with `Sec-Fetch-Site: cross-site` alone. Programs that send no Origin still work. Every request here
 * carries a loopback Host, so the Host rule never decides.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { PROBE_PATHS, probeRoutes } from "../helpers/probes.ts";
import { rawRequest, upgradeHeaders } from "../helpers/surface.ts";

/** Origins a hostile page could have; in process the server's own origin is http://localhost. */
const FOREIGN = [
  "http://evil.example",
  "http://127.0.0.1:5555",
  "http://localhost:3000",
  "null",
  "https://localhost",
  "http://localhost.evil.example",
];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ plugins: [probeRoutes] });
});
afterAll(() => t.close());

const json = (method: string, body: unknown, headers: Record<string, string>): RequestInit => ({
  method,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

describe("Origin alone", () => {
  test("a foreign or null Origin on a write is 403 in each family's envelope", async () => {
    for (const origin of FOREIGN) {
      const chat = await t.json<{ message: string }>(PROBE_PATHS.chat, postJson({ query: "x" }, { origin }));
      expect({ origin, status: chat.status }).toEqual({ origin, status: 403 });
      expect(chat.body.message).toContain("is not this server's own");
      const turns = await t.json(PROBE_PATHS.turns, postJson({ query: "x" }, { origin }));
      expect(turns).toMatchObject({ status: 403, body: { error: { code: "cross_origin_request" } } });
      for (const path of [PROBE_PATHS.search, PROBE_PATHS.agents]) {
        const { status, body } = await t.json<{ detail: unknown }>(
          path,
          postJson({ query: "x" }, { origin }),
        );
        expect({ path, status, type: typeof body.detail }).toEqual({ path, status: 403, type: "string" });
      }
    }
  });

  test("every state-changing method of the real routes is refused, and nothing changes", async () => {
    const origin = "http://127.0.0.1:5555";
    const writes: [string, string, unknown][] = [
      ["PUT", "/api/files/content", { path: "a.ts", content: "x" }],
      ["POST", "/api/files/append", { path: "a.ts", content: "x" }],
      ["PATCH", "/api/files/content", { path: "a.ts", old: "x", new: "y" }],
      ["POST", "/api/chat/settings", { settings: { extensions: ["/tmp/a.ts"] } }],
      ["POST", "/api/chat", { message: "hello" }],
      ["POST", "/v1/agents", { name: "a", role: "r", type: "CUSTOM" }],
      ["PATCH", "/api/settings", { revision: "x", updates: [] }],
    ];
    for (const [method, path, body] of writes) {
      const response = await t.request(path, json(method, body, { origin }));
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 403 });
    }
    for (const path of ["/api/files/content?path=a.ts", "/api/chat/account", "/v1/agents/agent_x"]) {
      const response = await t.request(path, { method: "DELETE", headers: { origin } });
      expect({ path, status: response.status }).toEqual({ path, status: 403 });
    }
    expect((await t.json<{ items: unknown[] }>("/api/files")).body.items).toEqual([]);
    expect((await t.json<{ agents: unknown[] }>("/v1/agents")).body.agents).toEqual([]);
  });

  test("the server's own origins and requests without Origin pass", async () => {
    const cases: Record<string, string>[] = [
      {},
      { origin: "http://localhost" },
      { origin: "http://127.0.0.1" },
      { origin: "http://[::1]" },
      { origin: "http://LOCALHOST" },
      { origin: "http://localhost", "sec-fetch-site": "same-origin" },
    ];
    for (const headers of cases) {
      const response = await t.request(PROBE_PATHS.turns, postJson({ query: "x" }, headers));
      expect({ headers, status: response.status }).toEqual({ headers, status: 200 });
    }
  });

  test("reads are not refused: the browser keeps a cross-origin response from the page", async () => {
    const response = await t.request(PROBE_PATHS.turns, { headers: { origin: "http://evil.example" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("Sec-Fetch-Site alone", () => {
  test("cross-site without any Origin is 403 on every state-changing method", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const response = await t.request(
        PROBE_PATHS.agents,
        json(method, { query: "x" }, { "sec-fetch-site": "cross-site" }),
      );
      expect({ method, status: response.status }).toEqual({ method, status: 403 });
      expect(((await response.json()) as { detail: string }).detail).toContain("cross-site");
    }
  });

  test("same-site, same-origin and none pass when the Origin is the server's own", async () => {
    for (const site of ["same-site", "same-origin", "none"]) {
      const headers = { "sec-fetch-site": site, origin: "http://localhost" };
      const response = await t.request(PROBE_PATHS.agents, postJson({ query: "x" }, headers));
      expect({ site, status: response.status }).toEqual({ site, status: 200 });
    }
    // same-site is what a page on another 127.0.0.1 port sends: its Origin is what refuses it.
    const otherPort = await t.request(
      PROBE_PATHS.agents,
      postJson({ query: "x" }, { "sec-fetch-site": "same-site", origin: "http://127.0.0.1:5555" }),
    );
    expect(otherPort.status).toBe(403);
  });
});

describe("public origins", () => {
  test("pass the Origin check, whichever allowed Host the request names", async () => {
    const app = await createTestApp({
      plugins: [probeRoutes],
      env: { APP_PUBLIC_ORIGINS: "https://atrium.example.com" },
    });
    try {
      const origin = "https://atrium.example.com";
      for (const host of ["atrium.example.com", "127.0.0.1"]) {
        const response = await app.request(PROBE_PATHS.turns, postJson({ query: "x" }, { origin, host }));
        expect({ host, status: response.status }).toEqual({ host, status: 200 });
      }
      const http = await app.request(
        PROBE_PATHS.turns,
        postJson({ query: "x" }, { origin: "http://atrium.example.com" }),
      );
      expect(http.status).toBe(403);
    } finally {
      await app.close();
    }
  });
});

describe("WebSocket upgrades on a listening server", () => {
  let server: { url: string; stop(): Promise<void> };
  let port: number;
  let host: string;
  beforeAll(() => {
    server = listen(t);
    port = Number(new URL(server.url).port);
    host = `127.0.0.1:${port}`;
  });
  afterAll(() => server.stop());

  const upgrade = (extra: Record<string, string>) =>
    rawRequest(port, { path: "/v1/chat", headers: upgradeHeaders(host, extra) });

  test("a foreign or null Origin, or cross-site alone, is 403 before the socket opens", async () => {
    for (const origin of [...FOREIGN, `http://localhost:${port + 1}`]) {
      const response = await upgrade({ origin });
      expect({ origin, status: response.status }).toEqual({ origin, status: 403 });
    }
    const crossSite = await upgrade({ "sec-fetch-site": "cross-site" });
    expect(crossSite.status).toBe(403);
    expect(JSON.parse(crossSite.body)).toEqual({ detail: expect.stringContaining("cross-site") });
  });

  test("the server's own origin on its port, and no Origin, open the socket", async () => {
    const cases: Record<string, string>[] = [
      {},
      { origin: `http://127.0.0.1:${port}` },
      { origin: `http://localhost:${port}` },
    ];
    for (const extra of cases) {
      const response = await upgrade(extra);
      expect({ extra, status: response.status }).toEqual({ extra, status: 101 });
    }
  });

  test("on a listening server a write from another local port is 403, from its own 200", async () => {
    const post = (origin: string) =>
      fetch(`${server.url}${PROBE_PATHS.chat}`, postJson({ query: "x" }, { origin }));
    expect((await post(`http://127.0.0.1:${port + 1}`)).status).toBe(403);
    expect((await post(`http://127.0.0.1:${port}`)).status).toBe(200);
    expect((await post(`http://localhost:${port}`)).status).toBe(200);
  });
});
