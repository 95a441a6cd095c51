/** The UI placeholder at /app/. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../helpers/app.ts";

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
