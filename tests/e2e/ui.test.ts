/** The UI shell and Swagger UI in a real browser, with every request outside the server refused. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { listen } from "../helpers/listen.ts";
import { ensureWebBuild } from "../helpers/web.ts";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let browser: Browser;

beforeAll(async () => {
  await ensureWebBuild();
  t = await createTestApp();
  server = listen(t);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser.close();
  await server.stop();
  await t.close();
});

/** A page that may only talk to our server: anything else (a CDN) is aborted and recorded. */
async function offlinePage(): Promise<{ page: Page; outside: string[] }> {
  const page = await browser.newPage();
  const outside: string[] = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(server.url)) return route.continue();
    outside.push(url);
    return route.abort();
  });
  return { page, outside };
}

test("a browser opening / lands on the UI shell, with its nav, under the CSP and offline", async () => {
  const { page, outside } = await offlinePage();
  const violations: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") violations.push(m.text());
  });
  await page.goto(`${server.url}/`);
  expect(new URL(page.url()).pathname).toBe("/app/");
  await page.waitForSelector("nav.topnav");
  const nav = await page.$$eval("nav.topnav a", (links) => links.map((a) => a.textContent));
  expect(nav).toEqual(["Chat", "Turns", "Search", "Agents", "Settings"]);
  await page.click("text=Settings");
  expect(new URL(page.url()).hash).toBe("#/settings");
  expect(await page.getAttribute('nav.topnav a[href="#/settings"]', "aria-current")).toBe("page");
  expect(violations.filter((v) => v.includes("Content Security Policy"))).toEqual([]);
  expect(outside).toEqual([]);
  await page.close();
});

test("Swagger UI renders every family's tag and the health routes offline", async () => {
  const { page, outside } = await offlinePage();
  await page.goto(`${server.url}/swagger`);
  await page.waitForSelector(".opblock-summary-path");
  const tags = await page.$$eval(".opblock-tag", (nodes) => nodes.map((n) => n.getAttribute("data-tag")));
  expect(tags).toEqual(expect.arrayContaining(["chat", "turns", "search", "agents"]));
  const paths = await page.$$eval(".opblock-summary-path", (nodes) =>
    nodes.map((n) => n.getAttribute("data-path")),
  );
  expect(paths).toEqual(expect.arrayContaining(["/health", "/health/ready", "/api/health", "/"]));
  expect(outside).toEqual([]);
  await page.close();
});
