/**
 * The chat UI's error and session handling in Chromium: a model error is shown in place and Retry sends
 * the message again; deleting a session asks first (Cancel keeps it) and then removes it everywhere.
 */
import { afterAll, expect } from "bun:test";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import type { Browser, Page } from "playwright";
import type { TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import type { ScriptedModel } from "../helpers/faux.ts";
import {
  type LiveUi,
  liveUi,
  openChat as openChatWith,
  pageTest,
  sendMessage,
  uiSuite,
} from "../helpers/ui.ts";

uiSuite("chat UI: errors and sessions", () => {
  let t: TestApp;
  let server: LiveUi["server"];
  let browser: Browser;
  const models: ScriptedModel[] = [];
  liveUi((live) => {
    ({ t, server, browser } = live);
  });
  afterAll(async () => {
    for (const m of models) m.dispose();
  });

  const openChat = (page: Page, m: ScriptedModel) => openChatWith(page, server.url, m.id);
  const send = sendMessage;

  pageTest(
    "a model error shows in place with Retry, which sends the message again",
    () => browser,
    async (page) => {
      const m = scripted(t, [
        fauxAssistantMessage("partial", {
          stopReason: "error",
          errorMessage: "invalid_request: model exploded",
        }),
        fauxAssistantMessage("Second time lucky."),
      ]);
      models.push(m);
      await openChat(page, m);
      await send(page, "try me");
      const alert = page.locator(".transcript [role=alert]").first();
      await alert.waitFor();
      expect(await alert.textContent()).toContain("model exploded");
      await alert.locator("button:has-text('Retry')").click();
      await page.waitForSelector("article.msg-assistant >> text=Second time lucky.");
      expect(m.calls()).toBe(2);
      expect(await page.locator(".transcript > .error").count()).toBe(0);
    },
  );

  pageTest(
    "deleting a session asks first; Cancel keeps it, Delete removes it from the sidebar and the server",
    () => browser,
    async (page) => {
      const m = scripted(t, [fauxAssistantMessage("Kept."), fauxAssistantMessage("Doomed.")]);
      models.push(m);
      await openChat(page, m);
      await send(page, "keep this one");
      await page.waitForSelector("text=Kept.");
      await page.click("button:has-text('New chat')");
      await send(page, "delete this one");
      await page.waitForSelector("text=Doomed.");
      await page.waitForSelector(".sessions .session-open:has-text('delete this one')");

      await page.click("button[aria-label='Delete delete this one']");
      await page.waitForSelector(".sessions >> text=Delete “delete this one”?");
      await page.click(".sessions button:has-text('Cancel')");
      await page.waitForSelector(".sessions .session-open:has-text('delete this one')");

      await page.click("button[aria-label='Delete delete this one']");
      await page.click(".sessions button.btn-danger:has-text('Delete')");
      await page.waitForSelector(".sessions .session-open:has-text('delete this one')", {
        state: "detached",
      });
      // The open conversation was the deleted one: the transcript is cleared.
      await page.waitForSelector("text=Doomed.", { state: "detached" });
      const list = await t.json<{ sessions: Record<string, unknown>[] }>("/api/chat/sessions");
      const titles = JSON.stringify(list.body.sessions);
      expect(titles).toContain("keep this one");
      expect(titles).not.toContain("delete this one");
    },
  );
});
