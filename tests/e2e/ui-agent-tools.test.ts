/**
 * An agent's MCP tool calls in the agents view (Chromium, local mode): a scripted tool-calling model
 * behind an agent calls server-everything's echo (Streamable HTTP on loopback); the view shows the call
 * with its arguments and result, labelled with the agent, and a notice for the listed server set to
 * "ask" (an agent replies unattended, so it gets none of its tools). axe-core passes.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import type { Browser } from "playwright";
import { as } from "../helpers/agents.ts";
import { postJson } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { everythingOverHttp } from "../helpers/mcp.ts";
import { axeCheck, type LiveUi, liveUi, pageTest, uiSuite } from "../helpers/ui.ts";

uiSuite("an agent's MCP tool calls in the agents view", () => {
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

  pageTest(
    "the call, its result and the refused 'ask' server are shown",
    () => browser,
    async (page) => {
      for (const [name, approval] of [
        ["everything", "allow"],
        ["asking", "ask"],
      ] as const)
        expect(
          (
            await t.json(
              "/api/chat/mcp-servers",
              postJson({ name, transport: "http", url: everything.url, approval }),
            )
          ).status,
        ).toBe(200);
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
