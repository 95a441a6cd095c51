/**
 * MCP servers in the web UI's Settings (Chromium, local mode): a user adds server-everything as a stdio
 * server (bundled into their workspace, run in their own sandbox), sees it connected with its tools,
 * sets it to "allow" and back to "ask", disables it, and removes it; an HTTP server added with a token
 * that cannot be reached shows "failed" with the reason, and the token is never shown back; the
 * operator's server (policy) is listed read-only. axe-core passes, in the dark theme too.
 */
import { afterAll, expect } from "bun:test";
import type { Browser } from "playwright";
import { createTestApp } from "../helpers/app.ts";
import { bundled, installInWorkspace } from "../helpers/mcp.ts";
import { policyVariant } from "../helpers/turns.ts";
import { axeCheck, type LiveUi, liveUi, pageTest, uiSuite } from "../helpers/ui.ts";
import { waitFor } from "../helpers/wait.ts";

const TOKEN = "tok-never-shown-5c2a91";
const OPERATOR_TOKEN = "operator-secret-0b7d33";

uiSuite("MCP servers in Settings", () => {
  let t: LiveUi["t"];
  let server: LiveUi["server"];
  let browser: Browser;
  let policy: ReturnType<typeof policyVariant> | undefined;
  afterAll(() => policy?.remove());
  liveUi(
    (live) => {
      ({ t, server, browser } = live);
    },
    async () => {
      policy = policyVariant(
        [],
        `[[defaults.mcp.servers]]
name = "company"
url = "http://127.0.0.1:1/mcp"
token_env = "COMPANY_MCP_TOKEN"
approval = "allow"
`,
      );
      const app = await createTestApp({
        policyPath: policy.path,
        env: { COMPANY_MCP_TOKEN: OPERATOR_TOKEN },
      });
      installInWorkspace(app.dataDir, "local", await bundled("server-everything"), "everything.mjs");
      return app;
    },
  );

  const listed = async () =>
    (
      await t.json<{ servers: { name: string; approval: string; enabled: boolean }[] }>(
        "/api/chat/mcp-servers",
      )
    ).body.servers;

  const approvalIs = (approval: string) =>
    waitFor(async () => (await listed()).find((s) => s.name === "everything")?.approval === approval, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: `the server stored approval ${approval}`,
    });

  pageTest(
    "add a stdio server, see it connected with its tools, set ask/allow, disable, remove; failures and secrets",
    () => browser,
    async (page) => {
      await page.goto(`${server.url}/app/#/settings`);
      const company = page.locator("#mcp-servers li[data-server=company]");
      // The operator's server: read-only, its failure's reason shown, its token nowhere.
      await page.waitForSelector("#mcp-servers li[data-server=company][data-state=failed]");
      expect(await company.textContent()).toContain("set by the operator");
      expect(await company.textContent()).toContain("MCP server 'company'");
      expect(await company.textContent()).toContain("token stored");
      expect(await company.locator("button, select, input").count()).toBe(0);

      // A stdio server run in the user's own sandbox.
      await page.fill("#mcp-name", "everything");
      await page.check("input[name=mcp-transport][value=stdio]");
      await page.fill("#mcp-command", "node");
      await page.fill("#mcp-args", "everything.mjs\nstdio");
      await page.click("button:has-text('Add server')");
      const row = page.locator("#mcp-servers li[data-server=everything]");
      await page.waitForSelector("#mcp-servers li[data-server=everything][data-state=connected]", {
        timeout: 20_000,
      });
      expect(await row.textContent()).toContain("node everything.mjs stdio");
      await row.locator("summary").click();
      const tools = await row.locator("ul[aria-label='Tools of everything']").textContent();
      expect(tools).toContain("everything__echo");
      expect(tools).toContain("everything__get-sum");
      expect(await page.inputValue("#mcp-approval-everything")).toBe("ask");

      // An HTTP server with a token that cannot be reached: failed with the reason; the token never shows.
      await page.fill("#mcp-name", "gone");
      await page.check("input[name=mcp-transport][value=http]");
      await page.fill("#mcp-url", "http://127.0.0.1:1/mcp");
      await page.fill("#mcp-token", TOKEN);
      await page.fill("#mcp-headers", "X-Team: blue");
      await page.click("button:has-text('Add server')");
      const gone = page.locator("#mcp-servers li[data-server=gone]");
      await page.waitForSelector("#mcp-servers li[data-server=gone][data-state=failed]");
      expect(await gone.locator("p.error").textContent()).toContain("MCP server 'gone'");
      expect(await gone.textContent()).toContain("token stored, header X-Team");
      expect(await page.inputValue("#mcp-token")).toBe("");
      const html = await page.content();
      expect(html).not.toContain(TOKEN);
      expect(html).not.toContain(OPERATOR_TOKEN);
      expect(html).not.toContain("blue");
      expect(await axeCheck(page)).toEqual([]);
      await page.emulateMedia({ colorScheme: "dark" });
      expect(await axeCheck(page)).toEqual([]);
      await page.emulateMedia({ colorScheme: "light" });

      // Ask / allow, kept across a reload, its stored state what the server uses.
      await page.selectOption("#mcp-approval-everything", "allow");
      await approvalIs("allow");
      await page.reload();
      await page.waitForSelector("#mcp-servers li[data-server=everything][data-state=connected]");
      expect(await page.inputValue("#mcp-approval-everything")).toBe("allow");
      // The tools probe after this change is held until the server is disabled (as a slow reconnect is on a
      // busy machine): its late answer must not replace "disabled".
      let release: (() => void) | undefined;
      const toolsUrl = "**/api/chat/mcp-servers/everything/tools";
      await page.route(toolsUrl, async (route) => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        await route.continue();
      });
      await page.selectOption("#mcp-approval-everything", "ask");
      await approvalIs("ask");
      await waitFor(() => release !== undefined, {
        timeoutMs: 10_000,
        intervalMs: 20,
        what: "the held probe",
      });

      // Disabled: shown so, and the server refuses to use it. A click, not Playwright's uncheck(): the box
      // shows the server's state, so it flips once the update is stored, which uncheck() may check too early.
      await row.locator("input[type=checkbox]").click();
      await page.waitForSelector("#mcp-servers li[data-server=everything][data-state=disabled]");
      const late = page.waitForResponse(toolsUrl);
      release?.();
      await late;
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
      expect(await row.getAttribute("data-state")).toBe("disabled");
      await page.unroute(toolsUrl);
      expect((await listed()).find((s) => s.name === "everything")?.enabled).toBe(false);
      expect((await t.json("/api/chat/mcp-servers/everything/tools")).status).toBe(409);

      // Removed.
      await row.locator("button:has-text('Remove')").click();
      await row.waitFor({ state: "detached" });
      await gone.locator("button:has-text('Remove')").click();
      await gone.waitFor({ state: "detached" });
      expect((await listed()).map((s) => s.name)).toEqual(["company"]);
      expect(await axeCheck(page)).toEqual([]);
    },
    60_000,
  );
});
