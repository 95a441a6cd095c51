/**
 * The search view's document list in real Chromium against a real listening server (issue 31, items 3
 * and 4): a note too small to make a graph says so under the build summary; the chosen index lists its
 * documents, Remove takes one out (the list and the counts follow) and Replace uploads a picked file (here
 * one saved as Latin-1) under the same name; the view passes axe with no serious or critical violation.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import type { Browser } from "playwright";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { listen } from "../helpers/listen.ts";
import { ensureWebBuild } from "../helpers/web.ts";
import { browserTest, dropFiles, seriousViolations, skipBrowser, withPage } from "./views-harness.ts";

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

browserTest(
  "a tiny note warns; an index's documents are listed, removed and replaced",
  async () => {
    await withPage(browser, "search-documents", async (page) => {
      await page.goto(`${server.url}/app/#/search`);
      await page.getByText("No index yet").waitFor();
      await page.getByLabel("Index name").fill("tiny");
      await dropFiles(page, '[data-testid="index-drop"]', [{ name: "note.txt", text: "buy milk and eggs." }]);
      await page.getByRole("button", { name: 'Build "tiny" from 1 file' }).click();
      const warnings = page.locator('[data-testid="build-warnings"]');
      await warnings.waitFor({ timeout: 60_000 });
      expect(await warnings.textContent()).toContain("too little to build a graph from");

      const built = await t.request(
        "/search/index",
        postJson({
          name: "people",
          documents: [
            { name: "ada.txt", text: story("Ada Lovelace", "Charles Babbage", "London") },
            { name: "curie.txt", text: story("Marie Curie", "Pierre Curie", "Paris") },
          ],
        }),
      );
      expect(built.status).toBe(200);
      await page.reload();
      await page.getByLabel("Index", { exact: true }).selectOption("people");
      const docs = page.locator('[data-testid="index-documents"]');
      await docs.getByRole("cell", { name: "curie.txt", exact: true }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByRole("button", { name: "Remove curie.txt" }).click();
      const status = page.locator('[data-testid="documents-status"]');
      await status.getByText(/^Removed curie\.txt: 1 document, 3 entities/).waitFor();
      await docs.getByRole("cell", { name: "curie.txt", exact: true }).waitFor({ state: "detached" });
      // The index list reloads after the removal: wait for its new count rather than read it at once.
      await page
        .getByLabel("Index", { exact: true })
        .locator("option", { hasText: "people (1 document)" })
        .waitFor({ state: "attached" });

      await docs
        .locator('input[type="file"]')
        .first()
        .setInputFiles({
          name: "new-ada.txt",
          mimeType: "text/plain",
          // Saved as Latin-1, as an older Project Gutenberg file is: read on the server, its letters kept.
          buffer: Buffer.from(
            `${story("Isaac Newton", "Edmond Halley", "Cambridge")}\n\nThey met at the Café Müller.`,
            "latin1",
          ),
        });
      await status.getByText(/^Replaced ada\.txt: 1 document, 3 entities/).waitFor();
      const names = (
        await t.json<{ documents: { name: string }[] }>("/search/indexes/people/documents")
      ).body.documents.map((d) => d.name);
      expect(names).toEqual(["ada.txt"]);
      const entities = await t.ctx.database.all<{ name: string }>("SELECT name FROM search_entities");
      expect(entities.map((e) => e.name)).toContain("Isaac Newton");
      const units = await t.ctx.database.all<{ text: string }>("SELECT text FROM search_units");
      expect(units.some((u) => u.text.includes("They met at the Café Müller."))).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
    });
  },
  120_000,
);

browserTest(
  "answers read as Markdown, and a citation link highlights the row it cites",
  async () => {
    await withPage(browser, "search-answer-markdown", async (page) => {
      const documents = [
        { name: "ada.txt", text: story("Ada Lovelace", "Charles Babbage", "London") },
        { name: "curie.txt", text: story("Marie Curie", "Pierre Curie", "Paris") },
      ];
      expect((await t.request("/search/index", postJson({ name: "answers", documents }))).status).toBe(200);
      await page.goto(`${server.url}/app/#/search`);
      await page.getByLabel("Index", { exact: true }).selectOption("answers");
      await page.getByLabel("Question").fill("Who did Ada Lovelace work with?");
      await page.getByLabel("Question").press("Enter");
      await page.getByRole("button", { name: "Ask" }).waitFor({ timeout: 30_000 });
      const answer = page.locator('[data-testid="search-answer"]');
      await answer.locator("a.cite").first().waitFor();
      // The "Supporting passages:" list is a list, not "- " lines; references are links, not raw ids.
      expect(await answer.locator("li").count()).toBeGreaterThan(0);
      expect(await answer.textContent()).not.toMatch(/^- /m);
      const link = answer.locator('a.cite[data-table="sources"]').first();
      const id = (await link.getAttribute("data-id")) as string;
      await link.click();
      const row = page.locator(`table[data-table="sources"] tr[data-id="${id}"]`);
      await expect(row.getAttribute("class")).resolves.toContain("cited");
      expect(page.url()).toContain("#/search");
      expect(await page.locator("tr.cited").count()).toBe(1);
      expect(await seriousViolations(page)).toEqual([]);
    });
  },
  120_000,
);
