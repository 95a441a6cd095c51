/**
 * What a new user hit in the UI (issue 25), each checked in real Chromium against a real listening
 * server, grouped by page so one browser serves them all: the agents chat follows new replies to the
 * bottom, renders Markdown, leaves no empty bubble after a reply, labels a sequential fleet's members by
 * their place in the pattern (the last one gives the answer) and has a placeholder in its message box.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import type { Browser } from "playwright";
import { agentModel, as } from "../helpers/agents.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { listen } from "../helpers/listen.ts";
import { ensureWebBuild } from "../helpers/web.ts";
import { browserTest, skipBrowser, withPage } from "./views-harness.ts";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let browser: Browser;

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

/** A reply long enough to overflow the transcript, in Markdown. */
const LONG_MARKDOWN = [
  "## Draft",
  "",
  "The **difference engine** tabulates polynomials:",
  "",
  ...Array.from({ length: 40 }, (_, i) => `- step ${i + 1}`),
].join("\n");

browserTest(
  "agents chat: follows the reply down, renders Markdown, no empty bubble, members labelled by their place, a placeholder",
  async () => {
    const api = as(t);
    const ada = agentModel(t, () => LONG_MARKDOWN);
    const bob = agentModel(t, () => "Final: *polished* and `done`.");
    const agent = async (name: string, model: string) =>
      (await api.post("/v1/agents", { name, role: `${name} role`, model })).body.id as string;
    const ids = [await agent("Ada", ada.id), await agent("Bob", bob.id)];
    const fleet = await api.post("/v1/fleets", {
      name: "Desk",
      type: "CUSTOM",
      agent_ids: ids,
      coordination_pattern: "sequential",
    });
    expect(fleet.status).toBe(200);

    await withPage(browser, "agents-chat", async (page) => {
      await page.setViewportSize({ width: 1000, height: 640 });
      await page.goto(`${server.url}/app/#/agents`);
      await page.getByRole("button", { name: "Chat with Desk" }).click();
      await page.locator('[data-testid="agent-chat-state"]', { hasText: "connected" }).waitFor();
      const box = page.locator("#agent-message");
      expect(await box.getAttribute("placeholder")).toBe("Message Desk…");
      await box.fill("Describe the difference engine");
      await box.press("Enter");
      // The reply has ended when the composer offers Send again.
      await page.getByRole("button", { name: "Send" }).waitFor({ timeout: 30_000 });
      await page.locator('.agent-entry[data-agent="Bob"]', { hasText: "Final" }).waitFor();

      // One bubble per member, none empty, each labelled by its place in the sequence.
      const entries = page.locator(".agent-entry-agent");
      expect(await entries.count()).toBe(2);
      expect(await entries.locator(".agent-label").allTextContents()).toEqual([
        "Ada · member",
        "Bob · answer",
      ]);
      for (const text of await entries.allTextContents())
        expect(text.replace(/^\S+ · \w+/, "").trim()).not.toBe("");

      // Markdown, rendered: a heading, bold, a list, emphasis and code.
      const first = entries.first();
      expect(await first.locator("h2").textContent()).toBe("Draft");
      expect(await first.locator("strong").textContent()).toBe("difference engine");
      expect(await first.locator("li").count()).toBe(40);
      expect(await entries.last().locator("em").textContent()).toBe("polished");
      expect(await entries.last().locator("code").textContent()).toBe("done");

      // The transcript overflows and shows its end: the new reply is in view.
      const position = await page.locator(".agent-transcript").evaluate((el) => ({
        overflows: el.scrollHeight > el.clientHeight,
        gap: el.scrollHeight - el.scrollTop - el.clientHeight,
      }));
      expect(position.overflows).toBe(true);
      expect(position.gap).toBeLessThan(2);
      expect(await entries.last().isVisible()).toBe(true);
    });
  },
  60_000,
);
