/** The built UI at /app/ (hashed assets, CSP, caching) and the favicon. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestApp, REPO_ROOT, type TestApp } from "../helpers/app.ts";
import { assetPaths, ensureWebBuild } from "../helpers/web.ts";

let t: TestApp;
beforeAll(async () => {
  await ensureWebBuild();
  t = await createTestApp();
});
afterAll(() => t.close());

test("/app/ serves the page with a strict CSP, and its hashed, long-cached script and stylesheet", async () => {
  const page = await t.request("/app/");
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(page.headers.get("cache-control")).toBe("no-cache");
  const csp = page.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("style-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain("unsafe-inline");
  expect(csp).not.toContain("unsafe-eval");
  const html = await page.text();
  expect(html).toContain("<title>Atrium</title>");
  // No inline script or style: everything the page runs is a file from this server.
  expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  expect(html).not.toContain("<style");
  expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);

  const { script, style } = assetPaths(html);
  expect(script).toMatch(/^\/app\/assets\/main-[a-z0-9]+\.js$/);
  const js = await t.request(script);
  expect(js.status).toBe(200);
  expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
  expect(js.headers.get("cache-control")).toContain("immutable");
  const code = await js.text();
  expect(code).toContain("/api/chat/sessions"); // the chat app is in the bundle
  expect(code).not.toContain("interface "); // TypeScript was compiled away
  expect(code).not.toMatch(/from\s*["']preact["']/); // bundled, no bare import left for the browser

  const css = await t.request(style);
  expect(css.status).toBe(200);
  expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
  expect(await css.text()).toContain("prefers-color-scheme:dark");
});

test("client-side routes get the page; unknown assets are 404", async () => {
  const deep = await t.request("/app/sessions/42");
  expect(deep.status).toBe(200);
  expect(await deep.text()).toContain("<title>Atrium</title>");
  expect((await t.request("/app/assets/nope.js")).status).toBe(404);
  expect((await t.request("/app/assets/main.js")).status).toBe(404); // only hashed names exist
  // No path from the request reaches the disk.
  expect((await t.request("/app/assets/..%2F..%2Fpackage.json")).status).toBe(404);
  expect((await t.request("/app/assets/..%2Findex.html")).status).toBe(404);
  const traversal = await t.request("/app/..%2Fpackage.json");
  expect(await traversal.text()).toContain("<title>Atrium</title>");
});

test("/favicon.ico is the app icon, a PNG the browser can show", async () => {
  const icon = await t.request("/favicon.ico");
  expect(icon.status).toBe(200);
  expect(icon.headers.get("content-type")).toBe("image/png");
  const bytes = Buffer.from(await icon.arrayBuffer());
  expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(bytes.equals(readFileSync(join(REPO_ROOT, "desktop", "build", "icon.png")))).toBe(true);
});
