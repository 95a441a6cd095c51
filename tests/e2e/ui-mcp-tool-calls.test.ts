/**
 * MCP tool calls in the web UI (Chromium, local mode; server-everything over Streamable HTTP on
 * loopback, scripted tool-calling models). Chat: a call to a server set to "ask" waits on the question
 * shown inline; allowed, it runs and shows as a tool call with its result like any tool. Agents: an
 * agent's call shows with its arguments and result, labelled with the agent, and a notice for the
 * listed server set to "ask" (an agent replies unattended, so it gets none of its tools). axe-core passes.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import type { Browser } from "playwright";
import { as } from "../helpers/agents.ts";
import { scripted } from "../helpers/chat.ts";
import { addHttpServers, everythingOverHttp } from "../helpers/mcp.ts";
import { axeCheck, type LiveUi, liveUi, openChat, pageTest, sendMessage, uiSuite } from "../helpers/ui.ts";

uiSuite("MCP tool calls in the web UI", () => {
  let t: LiveUi["t"];
  let server: LiveUi["server"];
  let browser: Browser;
  let everything: { url: string; stop(): void };
  beforeAll(async () => {
    everything = await everythingOverHttp();
  });
  afterAll(() => everything?.stop());
  liveUi((live) => {
    ({ t, server, browser } = live);
  });
  const addServers = () =>
    addHttpServers(t, everything.url, [
      ["everything", "allow"],
      ["asking", "ask"],
    ]);

  pageTest(
    "chat: an 'ask' server's call waits on the question; allowed, it shows with its result like any tool",
    () => browser,
    async (page) => {
      await addServers();
      const model = scripted(t, [
        fauxAssistantMessage([fauxToolCall("asking__echo", { message: "may I, browser" }, { id: "c1" })], {
          stopReason: "toolUse",
        }),
        fauxAssistantMessage("Allowed and echoed."),
      ]);
      await openChat(page, server.url, model.id);
      await sendMessage(page, "echo after asking");
      await page.waitForSelector(
        "section.question >> text=Allow the MCP server 'asking' to run its tool 'echo'",
      );
      expect(await axeCheck(page)).toEqual([]);
      await page.click("section.question button:has-text('Allow')");
      await page.waitForSelector("article.msg-assistant >> text=Allowed and echoed.");
      const tool = page.locator('details.tool[data-tool="asking__echo"]');
      await tool.locator("summary").click();
      expect(await tool.getAttribute("data-state")).toBe("output-available");
      expect(await tool.textContent()).toContain("Echo: may I, browser");
      model.dispose();
    },
    60_000,
  );

  pageTest(
    "agents: the call, its result and the refused 'ask' server are shown",
    () => browser,
    async (page) => {
      await addServers();
      const model = scripted(t, [
        fauxAssistantMessage(
          [fauxToolCall("everything__echo", { message: "seen in the browser" }, { id: "b1" })],
          { stopReason: "toolUse" },
        ),
        fauxAssistantMessage("The echo came back."),
      ]);
      await as(t).post("/v1/agents", {
        name: "Toolful",
        role: "caller",
        model: model.id,
        config: { mcp_servers: ["everything", "asking"] },
      });
      await page.goto(`${server.url}/app/#/agents`);
      await page.getByRole("button", { name: "Chat with Toolful" }).click();
      await page.locator('[data-testid="agent-chat-state"]', { hasText: "connected" }).waitFor();
      await page.locator("#agent-message").fill("echo something");
      await page.locator("#agent-message").press("Enter");
      await page.getByText("The echo came back.").waitFor({ timeout: 20_000 });
      const tool = page.locator(".agent-entry-tool");
      expect(await tool.count()).toBe(1);
      expect(await tool.locator("summary").textContent()).toMatch(/Toolful called everything__echo\s*done/);
      await tool.locator("summary").click();
      expect(await tool.textContent()).toContain('"message": "seen in the browser"');
      expect(await tool.textContent()).toContain("Echo: seen in the browser");
      const notice = page.locator(".agent-entry-notice");
      expect(await notice.textContent()).toContain("The MCP server 'asking' asks before each call");
      expect(await axeCheck(page)).toEqual([]);
      model.dispose();
    },
    60_000,
  );
});
