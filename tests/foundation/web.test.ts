/** The UI placeholder at /app/ and the favicon. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestApp, REPO_ROOT, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("/app/ serves the page, its stylesheet and its bundled script", async () => {
  const page = await t.request("/app/");
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
  const html = await page.text();
  expect(html).toContain("<title>Atrium</title>");

  const script = await t.request("/app/assets/main.js");
  expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
  const js = await script.text();
  expect(js).toContain("/health/ready");
  expect(js).not.toContain("interface Ready"); // TypeScript was compiled away

  const css = await t.request("/app/assets/style.css");
  expect(css.status).toBe(200);
  expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
});

test("client-side routes get the page; unknown assets are 404", async () => {
  const deep = await t.request("/app/sessions/42");
  expect(deep.status).toBe(200);
  expect(await deep.text()).toContain("<title>Atrium</title>");
  expect((await t.request("/app/assets/nope.js")).status).toBe(404);
  // No path from the request reaches the disk.
  expect((await t.request("/app/assets/..%2F..%2Fpackage.json")).status).toBe(404);
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
