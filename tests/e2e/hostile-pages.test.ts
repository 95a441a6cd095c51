/**
 * Web pages attacking the local server, in Debian's Chromium (the local surface, server/http/surface.ts
 * and bodies.ts):
 * - a page served from another local port runs the three-POST chain that once ran attacker code in the
 *   server (append a `.ts` file through the files API, point chat settings' `extensions` at it, send a
 *   chat message) in every encoding a page can send without a preflight, and opens a WebSocket;
 * - a DNS-rebinding page (`--host-resolver-rules` maps evil.example to 127.0.0.1) reads providers,
 *   files and settings and writes, as if it were the server's own origin.
 * Every request is refused, nothing the server stores changes, and the extension never runs. (Without
 * the guard the same page plants the file, points pi at it, and the chat message runs it in the
 * server process: measured before the guard landed.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { listen } from "../helpers/listen.ts";
import { stateHash } from "../helpers/surface.ts";
import { tempDir } from "../helpers/tmp.ts";
import { waitFor } from "../helpers/wait.ts";

const SECRET = "sk-e2e-provider-key-0123456789";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let port: number;
let attacker: ReturnType<typeof Bun.serve>;
/** Another local server that records what Chromium sends it: the headers a page's requests carry. */
let recorder: ReturnType<typeof Bun.serve>;
const recorded: { origin: string | null; fetchSite: string | null }[] = [];
let browser: Browser;
let markerDir: { path: string; remove(): void };
let marker: string;
let extension: string;

beforeAll(async () => {
  t = await createTestApp({ env: { OPENAI_API_KEY: SECRET, APP_SANDBOX_WARM: "0" } });
  server = listen(t);
  port = Number(new URL(server.url).port);
  markerDir = tempDir("atrium-marker-");
  marker = join(markerDir.path, "pwned");
  // Where the files API would put `evil.ts`: the path the settings step points pi at.
  extension = join(t.dataDir, "workspaces", "local", "files", "evil.ts");
  attacker = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () =>
      new Response("<!doctype html><title>cute cats</title>", { headers: { "content-type": "text/html" } }),
  });
  recorder = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      recorded.push({
        origin: request.headers.get("origin"),
        fetchSite: request.headers.get("sec-fetch-site"),
      });
      return new Response("noted");
    },
  });
  browser = await launchBrowser([
    "--host-resolver-rules=MAP evil.example 127.0.0.1, MAP recorder.example 127.0.0.1",
    // Chromium's Local Network Access check stops a page it saw come from elsewhere (here Playwright
    // delivers it) from reaching loopback; other browsers have no such check, and the server must not
    // rely on one. Off, the page gets what a rebinding page gets in those browsers.
    "--disable-features=LocalNetworkAccessChecks",
  ]);
});
afterAll(async () => {
  await browser.close();
  attacker.stop(true);
  recorder.stop(true);
  await server.stop();
  await t.close();
  markerDir.remove();
});

interface Seen {
  method: string;
  path: string;
  status: number;
}

/** Every answer the server gave the page, as Chromium's network layer saw it (no-cors hides it from JS). */
function watch(page: Page, host: string): Seen[] {
  const seen: Seen[] = [];
  page.on("response", (response) => {
    const request = response.request();
    const url = new URL(request.url());
    if (url.host !== host || url.pathname === "/cats") return;
    seen.push({
      method: request.method(),
      path: url.pathname,
      status: response.status(),
    });
  });
  return seen;
}

/** What the recorder saw of one no-cors POST from the page to `url`. */
async function headersSentTo(page: Page, url: string) {
  const from = recorded.length;
  await page.evaluate((u) => fetch(u, { method: "POST", mode: "no-cors", body: "x" }), url);
  return recorded[from];
}

/** Polls until `count` answers arrived (they are reported asynchronously). */
async function settle(seen: Seen[], count: number): Promise<void> {
  await waitFor(() => seen.length >= count, { what: `${count} answers` }).catch(() => {});
  expect(seen).toHaveLength(count);
}

/** The extension the chain plants: it would write the provider key next to the data dir when loaded. */
const code = (markerPath: string) =>
  // Each line stays valid when the page appends it more than once (one POST per encoding).
  `require("node:fs").writeFileSync(${JSON.stringify(markerPath)}, String(process.env.OPENAI_API_KEY));\nmodule.exports = function () {};\n`;

test("a page on another local port cannot run the three-POST chain or open the WebSocket", async () => {
  await t.request("/api/chat/settings");
  const before = await stateHash(t);
  const page = await browser.newPage();
  const seen = watch(page, `127.0.0.1:${port}`);
  await page.goto(`http://127.0.0.1:${attacker.port}/`);
  const outcome = await page.evaluate(
    async ({ target, source, extensionPath }) => {
      const form = (fields: Record<string, string>) => {
        const data = new FormData();
        for (const [k, v] of Object.entries(fields)) data.append(k, v);
        return data;
      };
      // Each step in the three encodings a page can send without a CORS preflight.
      const encodings = (fields: Record<string, string>, json: unknown): BodyInit[] => [
        new URLSearchParams(fields),
        form(fields),
        JSON.stringify(json),
      ];
      const steps: [string, BodyInit[]][] = [
        [
          "/api/files/append",
          encodings({ path: "evil.ts", content: source }, { path: "evil.ts", content: source }),
        ],
        [
          "/api/chat/settings",
          encodings(
            { settings: JSON.stringify({ extensions: [extensionPath] }) },
            { settings: { extensions: [extensionPath] } },
          ),
        ],
        ["/api/chat", encodings({ message: "hello" }, { message: "hello" })],
      ];
      let sent = 0;
      for (const [path, bodies] of steps) {
        for (const body of bodies) {
          await fetch(`${target}${path}`, { method: "POST", mode: "no-cors", body }).catch(() => undefined);
          sent++;
        }
      }
      const socket = await new Promise<string>((resolve) => {
        const ws = new WebSocket(`${target.replace("http", "ws")}/v1/chat`);
        ws.onopen = () => {
          ws.close();
          resolve("open");
        };
        ws.onerror = () => resolve("refused");
      });
      return { sent, socket };
    },
    { target: server.url, source: code(marker), extensionPath: extension },
  );
  expect(outcome).toEqual({ sent: 9, socket: "refused" });
  await settle(seen, 9);
  for (const post of seen) {
    expect(post).toMatchObject({ method: "POST", status: 403 });
  }
  // Chromium calls another port of 127.0.0.1 same-site, not cross-site: the Origin rule alone stops
  // this page.
  expect(await headersSentTo(page, `http://127.0.0.1:${recorder.port}/`)).toEqual({
    origin: `http://127.0.0.1:${attacker.port}`,
    fetchSite: "same-site",
  });
  await page.close();
  expect(await stateHash(t)).toBe(before);
  expect(existsSync(extension)).toBe(false);
  expect(existsSync(marker)).toBe(false);
  expect(JSON.stringify((await t.json("/api/chat/settings")).body)).not.toContain("evil.ts");
}, 30_000);

test("a DNS-rebinding page on evil.example reads nothing and writes nothing", async () => {
  const before = await stateHash(t);
  const host = `evil.example:${port}`;
  const page = await browser.newPage();
  const seen = watch(page, host);
  // The attacker's own server delivered this page; the name now resolves to 127.0.0.1.
  await page.route(`http://${host}/cats`, (route) =>
    route.fulfill({ contentType: "text/html", body: "<!doctype html><title>cute cats</title>" }),
  );
  await page.goto(`http://${host}/cats`);
  const results = await page.evaluate(
    async ({ source, extensionPath }) => {
      // Same-origin as far as the browser knows: it may read answers and send JSON.
      const out: { path: string; status: number; body: string }[] = [];
      const call = async (path: string, init?: RequestInit) => {
        const response = await fetch(path, init);
        out.push({ path, status: response.status, body: await response.text() });
      };
      for (const path of [
        "/api/chat/providers",
        "/api/files",
        "/api/settings",
        "/api/chat/settings",
        "/v1/agents",
      ])
        await call(path);
      const json = (body: unknown): RequestInit => ({
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      await call("/api/files/append", json({ path: "evil.ts", content: source }));
      await call("/api/chat/settings", json({ settings: { extensions: [extensionPath] } }));
      await call("/api/chat", json({ message: "hello" }));
      await call("/v1/agents", json({ name: "mole", role: "spy", type: "CUSTOM" }));
      const socket = await new Promise<string>((resolve) => {
        const ws = new WebSocket(`ws://${location.host}/v1/chat`);
        ws.onopen = () => resolve("open");
        ws.onerror = () => resolve("refused");
      });
      return { out, socket };
    },
    { source: code(marker), extensionPath: extension },
  );
  expect(results.socket).toBe("refused");
  expect(results.out).toHaveLength(9);
  for (const { path, status, body } of results.out) {
    expect({ path, status }).toEqual({ path, status: 421 });
    expect(body).toContain("does not answer to the host name");
    expect(body).not.toContain(SECRET);
  }
  await settle(seen, 9);
  for (const request of seen) expect(request.status).toBe(421);
  // A plain-http page sends no Fetch-Metadata at all; its reads carry no Origin either. The Host rule
  // alone stops this page's reads.
  expect(await headersSentTo(page, `http://recorder.example:${recorder.port}/`)).toEqual({
    origin: `http://${host}`,
    fetchSite: null,
  });
  await page.close();
  expect(await stateHash(t)).toBe(before);
  expect(existsSync(extension)).toBe(false);
  expect(existsSync(marker)).toBe(false);
}, 30_000);
