/**
 * Files dragged from the desktop in Chromium: real `dragenter`, `dragover`, `dragleave` and `drop`
 * events carrying a DataTransfer of Files, on the chat composer, the turn composer and the index build.
 * Each drop target shows a visible state while files are over it and says so in a live region, drops
 * what it was given, and passes axe-core while dragging. The index build takes a real PDF (built byte by
 * byte), reads it on the server, and its text is then found by a local search.
 */
import { expect } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import type { Browser, JSHandle, Page } from "playwright";
import type { TestApp } from "../helpers/app.ts";
import { axeCheck, type LiveUi, liveUi, pageTest, uiSuite } from "../helpers/ui.ts";
import { minimalPdf } from "../search/pdf-fixture.ts";

interface DroppedFile {
  name: string;
  bytes: Uint8Array;
  type: string;
}

/** A DataTransfer holding these files, made in the page (as the browser makes one for a desktop drag). */
function transferOf(page: Page, files: DroppedFile[]): Promise<JSHandle<DataTransfer>> {
  const list = files.map((f) => ({
    name: f.name,
    type: f.type,
    b64: Buffer.from(f.bytes).toString("base64"),
  }));
  return page.evaluateHandle((items) => {
    const data = new DataTransfer();
    for (const f of items) {
      const bytes = Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0));
      data.items.add(new File([bytes], f.name, { type: f.type }));
    }
    return data;
  }, list);
}

/** Drags the files onto the element (enter, over); the caller checks the state, then drops or leaves. */
async function dragOver(page: Page, selector: string, files: DroppedFile[]) {
  const dataTransfer = await transferOf(page, files);
  await page.dispatchEvent(selector, "dragenter", { dataTransfer });
  await page.dispatchEvent(selector, "dragover", { dataTransfer });
  return {
    drop: () => page.dispatchEvent(selector, "drop", { dataTransfer }),
    leave: () => page.dispatchEvent(selector, "dragleave", { dataTransfer }),
  };
}

const text = (name: string, body: string): DroppedFile => ({
  name,
  bytes: new TextEncoder().encode(body),
  type: "text/plain",
});

uiSuite("files dropped from the desktop", () => {
  let t: TestApp;
  let server: LiveUi["server"];
  let browser: Browser;
  liveUi((live) => {
    ({ t, server, browser } = live);
  });

  pageTest(
    "the chat composer: a visible and announced drag state, cleared on leave; a drop attaches the file",
    () => browser,
    async (page) => {
      await page.goto(`${server.url}/app/#/chat`);
      await page.waitForSelector("#composer-input");
      const files = [text("drag-notes.txt", "dragged in")];
      const drag = await dragOver(page, "form.composer", files);
      await page.waitForSelector('form.composer[data-drag="true"]');
      expect(await page.locator("form.composer .drop-hint").isVisible()).toBe(true);
      expect(await page.locator("form.composer .drop-hint").textContent()).toBe(
        "Release to attach the files",
      );
      expect(
        await page.evaluate(
          () => getComputedStyle(document.querySelector("form.composer") as Element).outlineStyle,
        ),
      ).toBe("dashed");
      expect(await page.locator("form.composer [role=status]").textContent()).toBe(
        "Release to add the files to the message",
      );
      expect(await axeCheck(page)).toEqual([]);
      await drag.leave();
      await page.waitForSelector('form.composer:not([data-drag="true"])');
      expect(await page.locator("form.composer .drop-hint").count()).toBe(0);

      const again = await dragOver(page, "form.composer", files);
      await again.drop();
      await page.waitForSelector("text=Attached: files/uploads/drag-notes.txt");
      await page.waitForSelector(
        'form.composer [role=status]:has-text("Attached files/uploads/drag-notes.txt")',
      );
      expect(await page.locator('form.composer[data-drag="true"]').count()).toBe(0);
      const written = `${t.dataDir}/workspaces/local/files/uploads/drag-notes.txt`;
      expect(existsSync(written) && readFileSync(written, "utf8")).toBe("dragged in");
    },
  );

  pageTest(
    "the turn composer: the drop zone shows and announces the drag; a drop uploads the attachment",
    () => browser,
    async (page) => {
      await page.goto(`${server.url}/app/#/turns`);
      await page.getByLabel("New session title").fill("Drops");
      await page.getByLabel("New session title").press("Enter");
      await page.getByRole("heading", { name: "Drops" }).waitFor();
      const zone = '[data-testid="turn-drop"]';
      const drag = await dragOver(page, zone, [text("table.csv", "a,b\n1,2\n")]);
      await page.waitForSelector(`${zone}.dropzone-over`);
      expect(await page.locator(`${zone} .muted`).first().textContent()).toBe("Release to add the files");
      expect(await page.locator(`${zone} [role=status]`).textContent()).toBe(
        "Release to add the files to this turn as attachments",
      );
      expect(await axeCheck(page)).toEqual([]);
      await drag.drop();
      await page.locator(`${zone} .chip`, { hasText: "table.csv" }).waitFor();
      expect(await page.locator(`${zone}.dropzone-over`).count()).toBe(0);
      const attachments = await t.ctx.database.all<{ filename: string }>(
        "SELECT filename FROM turn_attachments",
      );
      expect(attachments.map((a) => a.filename)).toContain("table.csv");
    },
  );

  pageTest(
    "the index build: a dropped PDF is read on the server and its text is found by a search",
    () => browser,
    async (page) => {
      await page.goto(`${server.url}/app/#/search`);
      await page.getByLabel("Index name").fill("papers");
      const zone = '[data-testid="index-drop"]';
      const pdf: DroppedFile = {
        name: "engine.pdf",
        type: "application/pdf",
        bytes: minimalPdf([
          "Ada Lovelace wrote the first program for the Analytical Engine.",
          "Charles Babbage designed the Analytical Engine in London.",
        ]),
      };
      const photo: DroppedFile = {
        name: "photo.png",
        type: "image/png",
        bytes: new Uint8Array([137, 80, 78, 71]),
      };
      const drag = await dragOver(page, zone, [pdf, photo]);
      await page.waitForSelector(`${zone}.dropzone-over`);
      expect(await page.locator(`${zone} [role=status]`).textContent()).toBe(
        "Release to add the files to the index build",
      );
      expect(await axeCheck(page)).toEqual([]);
      await drag.drop();
      await page.locator(`${zone} .chip`, { hasText: "engine.pdf" }).waitFor();
      await page.getByText("Skipped: photo.png (unsupported file type (.png))").waitFor();
      await page.getByRole("button", { name: 'Build "papers" from 1 file' }).click();
      const summary = page.locator('[data-testid="build-summary"]');
      await summary.waitFor({ timeout: 30_000 });
      // One of a thing is singular everywhere: the summary and the index list.
      expect(await summary.textContent()).toContain('Built "papers": 1 document, ');
      await page.locator("option", { hasText: "papers (1 document)" }).waitFor({ state: "attached" });

      await page.getByLabel("Question").fill("Who wrote the first program for the Analytical Engine?");
      await page.getByLabel("Question").press("Enter");
      await page.locator('table[data-table="sources"] tbody tr').first().waitFor({ timeout: 30_000 });
      expect(await page.locator('table[data-table="sources"]').textContent()).toContain("Ada Lovelace");
      expect(await axeCheck(page)).toEqual([]);
    },
    60_000,
  );
});
