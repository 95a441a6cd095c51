/**
 * The turns, search and agents views in real Chromium against a real listening server (warm sandbox
 * pool, offline model): a Python turn streams its code and output, attaches a dropped file, offers its
 * artifact for download and lists the file it wrote; a long turn is cancelled with Esc; an index is
 * built from dropped files with its progress shown, then searched locally and globally with the
 * context tables beside the answer; agents and a fleet are created and edited through the forms and
 * the fleet answers over the WebSocket with each agent labelled. Each view passes axe-core with no
 * serious or critical violation; everything here is driven by keyboard where a user would type.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import type { Browser, Page } from "playwright";
import type { TestApp } from "../helpers/app.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { listen } from "../helpers/listen.ts";
import { turnsApp } from "../helpers/turns.ts";
import { ensureWebBuild } from "../helpers/web.ts";
import { fixtureText } from "../search/fixtures.ts";
import {
  browserTest,
  dropFiles,
  focusVisible,
  seriousViolations,
  skipBrowser,
  withPage,
} from "./views-harness.ts";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let browser: Browser;

beforeAll(async () => {
  if (skipBrowser) return;
  await ensureWebBuild();
  t = await turnsApp();
  server = listen(t);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await t?.close();
});

async function openSession(page: Page, title: string): Promise<void> {
  await page.goto(`${server.url}/app/#/turns`);
  await page.getByLabel("New session title").fill(title);
  await page.getByLabel("New session title").press("Enter");
  await page.getByRole("heading", { name: title }).waitFor();
}

/** Types a message into the turn composer and sends it with Enter. */
async function sendTurn(page: Page, text: string): Promise<void> {
  const box = page.locator("#turn-text");
  await box.fill(text);
  await box.press("Enter");
}

browserTest(
  "turns: a Python turn streams its output, reads a dropped attachment, and offers its artifact and files",
  async () => {
    await withPage(browser, "turns-python", async (page) => {
      await openSession(page, "Python here");
      expect(await seriousViolations(page)).toEqual([]);
      await dropFiles(page, '[data-testid="turn-drop"]', [{ name: "numbers.csv", text: "a,b\n20,22\n" }]);
      await page.locator(".chip", { hasText: "numbers.csv" }).waitFor();
      await sendTurn(
        page,
        [
          "```python",
          "a, b = context.strip().splitlines()[1].split(',')",
          "print('sum', int(a) + int(b))",
          "write_file('notes/hello.txt', 'hi there')",
          "create_artifact('Report', '# The report')",
          "```",
        ].join("\n"),
      );
      const done = page.locator('.turn[data-status="completed"]');
      await done.waitFor({ timeout: 30_000 });
      expect(await done.locator('[data-testid="turn-output"]').first().textContent()).toContain("sum 42");
      expect(await done.textContent()).toContain("Attached numbers.csv");
      const link = done.getByRole("link", { name: "Report" });
      const href = (await link.getAttribute("href")) ?? "";
      const artifact = await page.request.get(`${server.url}${href}`);
      expect(await artifact.text()).toBe("# The report");
      await page.getByRole("button", { name: "notes/hello.txt" }).click();
      await page.locator(".files-panel pre", { hasText: "hi there" }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      // After a reload the committed turn shows the same parts from history.
      await page.reload();
      await page.getByRole("button", { name: "Python here" }).click();
      await page.locator('[data-testid="turn-output"]', { hasText: "sum 42" }).waitFor();
    });
  },
  90_000,
);

browserTest(
  "turns: a long-running turn shows its code while it runs and Esc cancels it",
  async () => {
    await withPage(browser, "turns-cancel", async (page) => {
      await openSession(page, "Forever");
      await sendTurn(page, "```python\nimport time\nwhile True:\n    time.sleep(0.05)\n```");
      const live = page.locator(".turn-live");
      await live.locator('[data-testid="turn-status"]', { hasText: "running" }).waitFor({ timeout: 30_000 });
      await live.locator(".turn-code", { hasText: "while True" }).waitFor();
      await page.getByRole("button", { name: "Cancel turn" }).waitFor();
      await page.keyboard.press("Escape");
      await page.locator('.turn[data-status="cancelled"]').waitFor({ timeout: 30_000 });
      // The live pane goes once the turn is in history (a moment after, not in the same frame).
      await page.locator(".turn-live").waitFor({ state: "detached", timeout: 10_000 });
    });
  },
  90_000,
);

browserTest(
  "turns: a turn still running when its session is left is followed again on coming back, and Cancel works",
  async () => {
    await withPage(browser, "turns-reattach", async (page) => {
      await openSession(page, "Elsewhere");
      await openSession(page, "Long run");
      await sendTurn(
        page,
        [
          "```python\nprint('step one')\n```",
          "```python\nimport time\ntime.sleep(2)\nprint('step two')\n```",
          "```python\nimport time\nwhile True:\n    time.sleep(0.05)\n```",
        ].join("\n"),
      );
      const live = page.locator(".turn-live");
      await live.locator('[data-testid="turn-output"]', { hasText: "step one" }).waitFor({ timeout: 30_000 });
      // Leave for another session: the page's stream closes, the turn runs on.
      await page.getByRole("button", { name: "Elsewhere" }).click();
      await page.getByRole("heading", { name: "Elsewhere" }).waitFor();
      // The live pane goes once the turn is in history (a moment after, not in the same frame).
      await page.locator(".turn-live").waitFor({ state: "detached", timeout: 10_000 });
      // And the Turns view itself, then back.
      await page.goto(`${server.url}/app/#/chat`);
      await page.waitForSelector("#composer-input");
      await page.goto(`${server.url}/app/#/turns`);
      await page.getByRole("button", { name: "Long run" }).click();
      await page.getByRole("heading", { name: "Long run" }).waitFor();
      // What it printed so far, then the rest as it comes.
      await live.locator('[data-testid="turn-output"]', { hasText: "step one" }).waitFor();
      await live.locator('[data-testid="turn-output"]', { hasText: "step two" }).waitFor({ timeout: 30_000 });
      await live.locator(".turn-code", { hasText: "while True" }).waitFor({ timeout: 30_000 });
      expect(await live.locator('[data-testid="turn-status"]').textContent()).toBe("running");
      // Drawn once: history does not list the running turn beside it.
      expect(await page.locator(".turn", { hasText: "step one" }).count()).toBe(1);
      await page.getByRole("button", { name: "Cancel turn" }).click();
      await page.locator('.turn[data-status="cancelled"]').waitFor({ timeout: 30_000 });
      // The live pane goes once the turn is in history (a moment after, not in the same frame).
      await page.locator(".turn-live").waitFor({ state: "detached", timeout: 10_000 });
      expect(await seriousViolations(page)).toEqual([]);
    });
  },
  90_000,
);

browserTest(
  "search: an index built from dropped files shows its progress, then local and global questions stream with their context",
  async () => {
    await withPage(browser, "search", async (page) => {
      await page.goto(`${server.url}/app/#/search`);
      await page.getByText("No index yet").waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByLabel("Index name").fill("carol");
      await dropFiles(page, '[data-testid="index-drop"]', [
        { name: "stave-one.txt", text: fixtureText("stave-one.txt") },
        { name: "stave-three.txt", text: fixtureText("stave-three.txt") },
        { name: "picture.png", text: "\u0089PNG", type: "image/png" },
      ]);
      await page.getByText("Skipped: picture.png (unsupported file type (.png))").waitFor();
      // Record every progress label the page shows while the build runs.
      await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { progressSeen: string[] }).progressSeen = seen;
        new MutationObserver(() => {
          const label = document.querySelector(".build-progress label")?.textContent;
          if (label && seen.at(-1) !== label) seen.push(label);
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      });
      await page.getByRole("button", { name: 'Build "carol" from 2 files' }).click();
      const summary = page.locator('[data-testid="build-summary"]');
      await summary.waitFor({ timeout: 60_000 });
      expect(await summary.textContent()).toContain('Built "carol": 2 documents');
      const seen = await page.evaluate(() => (window as unknown as { progressSeen: string[] }).progressSeen);
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.join(" | ")).toMatch(
        /(Splitting documents|Extracting entities|Finding communities|Writing reports) \(\d\/4\)/,
      );
      expect(await page.getByLabel("Index", { exact: true }).inputValue()).toBe("carol");

      await page.getByLabel("Question").fill("Who was Marley?");
      await page.getByLabel("Question").press("Enter");
      const answer = page.locator('[data-testid="search-answer"]');
      await page.locator('table[data-table="entities"]', { hasText: "Marley" }).waitFor({ timeout: 30_000 });
      await page.getByRole("button", { name: "Ask" }).waitFor();
      expect(await answer.textContent()).toContain("Marley");
      expect(await page.locator('table[data-table="sources"] tbody tr').count()).toBeGreaterThan(0);

      await page.getByRole("radio", { name: /Global/ }).check();
      await page.getByLabel("Question").fill("What happened to Scrooge at Christmas?");
      await page.getByRole("button", { name: "Ask" }).click();
      await page.locator('table[data-table="points"] tbody tr').first().waitFor({ timeout: 30_000 });
      await page.getByRole("button", { name: "Ask" }).waitFor();
      const globalAnswer = (await answer.textContent()) ?? "";
      expect(globalAnswer).toContain("Scrooge");
      expect(globalAnswer).toContain("[Data: Reports");
      expect(await page.locator('table[data-table="reports"] tbody tr').count()).toBeGreaterThan(0);
      expect(await seriousViolations(page)).toEqual([]);
    });
  },
  120_000,
);

async function createAgent(page: Page, name: string, role: string): Promise<void> {
  await page.getByRole("button", { name: "New agent" }).click();
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Role").fill(role);
  await page.getByLabel("research").check();
  await page.getByRole("button", { name: "Create agent" }).click();
  await page.getByRole("button", { name: `Edit ${name}` }).waitFor();
}

browserTest(
  "agents: agents and a fleet made and edited through the forms; the fleet answers over the WebSocket, each agent labelled",
  async () => {
    await withPage(browser, "agents", async (page) => {
      await page.goto(`${server.url}/app/#/agents`);
      await page.getByText("No agents yet").waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await createAgent(page, "Ada", "researcher");
      await createAgent(page, "Bob", "writer");
      await page.getByRole("button", { name: "Edit Bob" }).click();
      await page.getByLabel("Role").fill("editor");
      await page.getByRole("button", { name: "Save agent" }).click();
      await page.locator(".entity-item", { hasText: "editor" }).waitFor();
      await page.getByRole("button", { name: "New fleet" }).click();
      await page.getByLabel("Name").fill("Desk");
      await page.getByRole("checkbox", { name: "Ada" }).check();
      await page.getByRole("checkbox", { name: "Bob" }).check();
      await page.getByText("Order: Ada → Bob").waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByRole("button", { name: "Create fleet" }).click();
      await page.getByRole("button", { name: "Chat with Desk" }).waitFor();
      await page.getByRole("button", { name: "Chat with Desk" }).click();
      await page.locator('[data-testid="agent-chat-state"]', { hasText: "connected" }).waitFor();
      const box = page.locator("#agent-message");
      await box.fill("Write a note about the difference engine");
      await box.press("Enter");
      const ada = page.locator('.agent-entry[data-agent="Ada"]');
      const bob = page.locator('.agent-entry[data-agent="Bob"]');
      await bob.getByText(/Your message was/).waitFor({ timeout: 30_000 });
      expect(await ada.locator(".agent-label").textContent()).toContain("Ada");
      expect(await ada.textContent()).toContain("No model is configured");
      expect(await bob.textContent()).toContain("No model is configured");
      expect(await page.locator(".agent-entry-user").textContent()).toContain("difference engine");
      // Keyboard: Shift+Tab from the message box reaches a control that shows a focus ring.
      await box.focus();
      await page.keyboard.press("Shift+Tab");
      expect(await focusVisible(page)).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
    });
  },
  90_000,
);

browserTest(
  "each view fits a narrow window without sideways scrolling and passes axe in the dark theme too",
  async () => {
    await withPage(browser, "narrow-dark", async (page) => {
      await page.setViewportSize({ width: 360, height: 740 });
      await page.emulateMedia({ colorScheme: "dark" });
      for (const view of ["turns", "search", "agents"]) {
        await page.goto(`${server.url}/app/#/${view}`);
        await page.locator(".view h2").first().waitFor();
        // The lists load after the first paint: wait until each view shows its content.
        await page.locator(".empty, .list li, select").first().waitFor();
        // Then what the lists lead to (the chosen index's documents): check the view once all has loaded.
        await page.waitForLoadState("networkidle");
        const overflow = await page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        expect({ view, overflow }).toEqual({ view, overflow: 0 });
        expect({ view, violations: await seriousViolations(page) }).toEqual({ view, violations: [] });
      }
    });
  },
  60_000,
);
