/**
 * What a new user hit in the UI (issue 25), each checked in real Chromium against a real listening
 * server, grouped by page so one browser serves them all: the agents chat follows new replies to the
 * bottom, renders Markdown, leaves no empty bubble after a reply, labels a sequential fleet's members by
 * their place in the pattern (the last one gives the answer) and has a placeholder in its message box;
 * the chat and turns session lists show when each session was last used (four "hello" chats were
 * indistinguishable), and a turns session started from the terminal is titled by its text, not by the
 * code fence it opens with; at 390 px the brand stays in the top bar, and the first-run card says an
 * unreachable Ollama once.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import type { Browser } from "playwright";
import { titleOf } from "../../cli/turns/client.ts";
import { agentModel, as } from "../helpers/agents.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { listen } from "../helpers/listen.ts";
import { lines } from "../helpers/streams.ts";
import { ensureWebBuild } from "../helpers/web.ts";
import { browserTest, skipBrowser, withPage } from "./views-harness.ts";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let browser: Browser;

beforeAll(async () => {
  if (skipBrowser) return;
  await ensureWebBuild();
  // Ollama's address is a loopback port nothing listens on: the first-run card finds it unreachable.
  const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const ollama = `http://127.0.0.1:${closed.port}`;
  closed.stop(true);
  t = await createTestApp({ env: { OLLAMA_BASE_URL: ollama } });
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

    // The scripted models leave the catalog afterwards (the first-run card shows only without models).
    try {
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
    } finally {
      ada.dispose();
      bob.dispose();
    }
  },
  60_000,
);

browserTest(
  "session lists: chats with the same title show when they were used; a terminal turn session is titled by its text",
  async () => {
    for (let i = 0; i < 2; i++) {
      const events = await lines(
        await t.request(
          "/api/chat",
          postJson({ message: "hello", model: { provider: "offline", id: "offline" } }),
        ),
      );
      expect(events.at(-1)?.type).toBe("done");
    }
    // What the terminal client names a session whose first message opens with a code fence.
    const message = "```python\nprint(6 * 7)\n```";
    expect(titleOf(message)).toBe("print(6 * 7)");
    expect(titleOf("~~~\n\n  x = 1\n~~~")).toBe("x = 1");
    expect(titleOf("```\n```")).toBe("terminal session");
    const created = await t.request("/api/sessions", postJson({ title: titleOf(message) }));
    expect(created.status).toBe(200);
    const year = String(new Date().getFullYear());

    await withPage(browser, "session-lists", async (page) => {
      await page.goto(`${server.url}/app/`);
      const hellos = page.locator(".sessions .session-open", { hasText: "hello" });
      await hellos.nth(1).waitFor();
      for (const item of await hellos.all()) {
        expect(await item.locator(".session-title").textContent()).toBe("hello");
        const date = item.locator("time.session-date");
        expect(Number.isNaN(Date.parse((await date.getAttribute("datetime")) ?? ""))).toBe(false);
        expect(await date.textContent()).toContain(year);
      }

      await page.goto(`${server.url}/app/#/turns`);
      const turn = page.locator(".session-list button", { hasText: "print(6 * 7)" });
      await turn.waitFor();
      expect(await page.locator(".session-list").textContent()).not.toContain("```");
      expect(await turn.locator("time.session-date").textContent()).toContain(year);
    });
  },
  60_000,
);

browserTest(
  "first run at 390 px: the brand stays in view; the setup card says an unreachable Ollama once",
  async () => {
    await withPage(browser, "first-run-narrow", async (page) => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${server.url}/app/`);
      const card = page.locator("section.setup");
      await card.waitFor();
      const brand = page.locator(".topnav .brand");
      expect(await brand.isVisible()).toBe(true);
      const box = await brand.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow).toBe(0);

      // Every way the card offers to reach Ollama, tried: one failure, said once.
      for (const button of await card.locator("button").all()) await button.click();
      await card.locator(".error", { hasText: "Ollama is unreachable" }).first().waitFor();
      await card.locator("button:not([disabled])", { hasText: "Find local Ollama models" }).waitFor();
      expect(await card.locator(".error").count()).toBe(1);
      expect(await card.getByText(/unreachable/).count()).toBe(1);
    });
  },
  60_000,
);
