/** The UI shell and Swagger UI in a real browser, with every request outside the server refused. */
import { expect, test } from "bun:test";
import type { Browser, Page } from "playwright";
import { axeCheck, type LiveUi, liveUi } from "../helpers/ui.ts";

let server: LiveUi["server"];
let browser: Browser;
liveUi((live) => {
  ({ server, browser } = live);
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
  // The CSP refuses script a hostile message might smuggle in: an inline <script> and an inline handler.
  const ran = await page.evaluate(() => {
    const w = window as unknown as { inlineRan?: boolean; handlerRan?: boolean };
    const script = document.createElement("script");
    script.textContent = "window.inlineRan = true";
    document.body.append(script);
    const img = document.createElement("img");
    img.setAttribute("onerror", "window.handlerRan = true");
    // Listeners run in the order they were added: the inline one (had it been allowed) runs first.
    const done = new Promise((resolve) =>
      img.addEventListener("error", () => resolve([w.inlineRan, w.handlerRan])),
    );
    img.src = "data:,x";
    document.body.append(img);
    return done;
  });
  expect(ran).toEqual([undefined, undefined]);
  expect(outside).toEqual([]);
  await page.close();
});

test("a stored theme is on the first frame: it is set before the app's script runs", async () => {
  const context = await browser.newContext({ colorScheme: "dark" });
  const page = await context.newPage();
  await page.goto(`${server.url}/app/#/chat`);
  await page.waitForSelector(".composer");
  await page.evaluate(() => localStorage.setItem("atrium.theme", "light"));
  await page.close();
  // A fresh page (routing turns the HTTP cache off) holds the app's bundle: what it shows meanwhile is
  // what its first frames show.
  const fresh = await context.newPage();
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  await fresh.route(/\/app\/assets\/main-[^/]+\.js$/, async (route) => {
    await held;
    await route.continue();
  });
  await fresh.goto(`${server.url}/app/#/chat`, { waitUntil: "commit" });
  await fresh.waitForFunction(() => document.readyState !== "loading" && document.styleSheets.length > 0);
  const early = await fresh.evaluate(() => ({
    theme: document.documentElement.dataset.theme,
    background: getComputedStyle(document.body).backgroundColor,
    appRan: document.getElementById("root")?.childElementCount ?? 0,
  }));
  expect(early).toEqual({ theme: "light", background: "rgb(255, 255, 255)", appRan: 0 });
  release();
  await fresh.waitForSelector(".composer");
  expect(await fresh.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(
    "rgb(255, 255, 255)",
  );
  await context.close();
});

test("the theme follows the system, the toggle overrides it and is remembered; a narrow window stacks the chat", async () => {
  const context = await browser.newContext({ colorScheme: "dark" });
  const page = await context.newPage();
  await page.goto(`${server.url}/app/#/chat`);
  await page.waitForSelector(".composer");
  const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  expect(await background()).toBe("rgb(21, 24, 28)"); // the dark palette, from prefers-color-scheme
  expect(await axeCheck(page)).toEqual([]);
  await page.click("button[aria-label='Switch to light theme']");
  expect(await page.getAttribute("html", "data-theme")).toBe("light");
  expect(await background()).toBe("rgb(255, 255, 255)");
  await page.reload();
  await page.waitForSelector(".composer");
  expect(await background()).toBe("rgb(255, 255, 255)");
  expect(await axeCheck(page)).toEqual([]);

  await page.setViewportSize({ width: 380, height: 700 });
  const layout = await page.evaluate(() => {
    const side = document.querySelector(".sidebar")?.getBoundingClientRect();
    const main = document.querySelector(".main-pane")?.getBoundingClientRect();
    return {
      stacked: side && main ? main.top >= side.bottom - 1 : false,
      overflow: document.documentElement.scrollWidth > window.innerWidth,
    };
  });
  expect(layout).toEqual({ stacked: true, overflow: false });
  // Keyboard: Tab from the page start reaches the nav with a visible focus ring.
  await page.keyboard.press("Tab");
  const focused = await page.evaluate(() => {
    const el = document.activeElement as HTMLElement;
    return { tag: el.tagName, outline: getComputedStyle(el).outlineStyle };
  });
  expect(focused).toEqual({ tag: "A", outline: "solid" });
  await context.close();
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
