/**
 * The search view's graph in real Chromium against a real listening server (issue 31, item 5): the chosen
 * index's graph is drawn (sigma, WebGL), finding an entity by name shows its description and sources,
 * clicking the background clears it and clicking the entity on the canvas shows it again, the canvas
 * takes its colours from the theme (the pixel under the selected entity is the theme's foreground, in
 * light and then dark), "What about X?" fills the search box and answers, and the view passes axe in both
 * themes.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import type { Browser, Page } from "playwright";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { listen } from "../helpers/listen.ts";
import { ensureWebBuild } from "../helpers/web.ts";
import { browserTest, seriousViolations, skipBrowser, withPage } from "./views-harness.ts";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let browser: Browser;

const story = (a: string, b: string, place: string) =>
  `${a} worked with ${b} in ${place}.\n\nEvery morning ${a} wrote to ${b}.\n\n${b} answered ${a} from ${place}.`;

beforeAll(async () => {
  if (skipBrowser) return;
  await ensureWebBuild();
  t = await createTestApp();
  server = listen(t);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await t?.close();
});

/** The colour on screen at a point of the page, decoded from a screenshot on a blank page (no CSP there). */
async function pixel(page: Page, x: number, y: number): Promise<number[]> {
  const png = await page.screenshot({ clip: { x, y, width: 1, height: 1 } });
  const blank = await browser.newPage();
  try {
    return await blank.evaluate(async (b64) => {
      const image = new Image();
      image.src = `data:image/png;base64,${b64}`;
      await image.decode();
      const canvas = document.createElement("canvas");
      canvas.width = 1;
      canvas.height = 1;
      const context = canvas.getContext("2d") as CanvasRenderingContext2D;
      context.drawImage(image, 0, 0);
      return [...context.getImageData(0, 0, 1, 1).data].slice(0, 3);
    }, png.toString("base64"));
  } finally {
    await blank.close();
  }
}

/** `--fg` of the page as it is now, as [r, g, b]. */
async function foreground(page: Page): Promise<number[]> {
  return page.evaluate(() => {
    const hex = getComputedStyle(document.documentElement).getPropertyValue("--fg").trim();
    return [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
  });
}

/** Waits (up to 10 s) until the pixel at a point is near `colour`; answers the last pixel read. */
async function pixelBecomes(page: Page, x: number, y: number, colour: number[]): Promise<number[]> {
  let last: number[] = [];
  for (let i = 0; i < 40; i++) {
    last = await pixel(page, x, y);
    if (near(last, colour)) break;
    await page.waitForTimeout(250);
  }
  return last;
}

const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - (b[i] as number)) <= 12);

browserTest(
  "the graph is drawn; an entity found or clicked shows its details; colours follow the theme; What about X? asks",
  async () => {
    await withPage(browser, "search-graph", async (page) => {
      const documents = [
        { name: "ada.txt", text: story("Ada Lovelace", "Charles Babbage", "London") },
        { name: "curie.txt", text: story("Marie Curie", "Pierre Curie", "Paris") },
      ];
      expect((await t.request("/search/index", postJson({ name: "people", documents }))).status).toBe(200);
      await page.emulateMedia({ colorScheme: "light" });
      await page.goto(`${server.url}/app/#/search`);
      await page.getByLabel("Index", { exact: true }).selectOption("people");
      const graph = page.locator('[data-testid="index-graph"]');
      await graph.getByText(/\d+ entities, \d+ relationships/).waitFor();
      const canvas = page.locator('[data-testid="graph-canvas"][data-painted="true"]');
      await canvas.waitFor({ timeout: 30_000 });
      // Every edge that will be drawn is drawn: the mark bench/ui.ts waits for before timing gestures.
      await page.locator('[data-testid="graph-canvas"][data-complete="true"]').waitFor({ timeout: 30_000 });
      expect(await seriousViolations(page)).toEqual([]);

      // Found by name (the keyboard's way): centred on the canvas, its details beside it.
      await page.getByLabel("Find an entity").fill("ada lovelace");
      await page.getByRole("button", { name: "Show", exact: true }).click();
      const details = page.locator('[data-testid="graph-entity"]');
      await details.getByRole("heading", { name: "Ada Lovelace" }).waitFor();
      expect(await details.textContent()).toContain("ada.txt");
      expect(await details.textContent()).toContain("Charles Babbage");

      // A click on the background clears it; a click on the entity (now at the centre) shows it again.
      await canvas.scrollIntoViewIfNeeded();
      const box = (await canvas.boundingBox()) as { x: number; y: number; width: number; height: number };
      await page.waitForTimeout(500); // the camera's 300 ms move to the entity
      await page.mouse.click(box.x + 4, box.y + 4);
      await details.waitFor({ state: "detached" });
      // Two clicks closer than sigma's double-click timeout (300 ms) are a double click, which zooms.
      await page.waitForTimeout(600);
      const cx = Math.round(box.x + box.width / 2);
      const cy = Math.round(box.y + box.height / 2);
      await page.mouse.click(cx, cy);
      await details.getByRole("heading", { name: "Ada Lovelace" }).waitFor();

      // The selected entity is drawn in the theme's foreground colour, light and then dark.
      await page.mouse.move(box.x + 4, box.y + 4);
      const light = await foreground(page);
      expect(near(await pixelBecomes(page, cx, cy, light), light)).toBe(true);
      await page.getByRole("button", { name: "Switch to dark theme" }).click();
      const dark = await foreground(page);
      expect(near(dark, light)).toBe(false);
      expect(near(await pixelBecomes(page, cx, cy, dark), dark)).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);

      await details.getByRole("button", { name: "What about Ada Lovelace?" }).click();
      await expect(page.getByLabel("Question").inputValue()).resolves.toBe("What about Ada Lovelace?");
      const answer = page.locator('[data-testid="search-answer"]');
      await answer.getByText("Ada Lovelace").first().waitFor({ timeout: 30_000 });
      expect(await answer.textContent()).toContain("Charles Babbage");
      expect(await seriousViolations(page)).toEqual([]);
    });
  },
  120_000,
);
