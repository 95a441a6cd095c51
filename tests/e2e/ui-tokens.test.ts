/**
 * Access tokens in the web UI's Settings (a team server, Chromium): a signed-in user creates a token
 * with scopes and an expiry, sees it once, and it works as a bearer (its scopes and /mcp); the list shows
 * name, scopes, created, last used and expiry; revoking it removes it and the server refuses it at once.
 * Local mode has no such panel. axe-core passes.
 */
import { expect } from "bun:test";
import type { Browser } from "playwright";
import { authApp, PASSWORD } from "../auth/auth-app.ts";
import { axeCheck, type LiveUi, liveUi, pageTest, uiSuite } from "../helpers/ui.ts";

uiSuite("access tokens in Settings (protected mode)", () => {
  let server: LiveUi["server"];
  let browser: Browser;
  liveUi((live) => {
    ({ server, browser } = live);
  }, authApp);

  pageTest(
    "create a token, shown once; it works with its scopes; the list; revoke refuses it at once",
    () => browser,
    async (page) => {
      await page.goto(`${server.url}/app/`);
      await page.click("button:has-text('Create an account')");
      await page.fill("#auth-email", "ann@example.org");
      await page.fill("#auth-password", PASSWORD);
      await page.click("button[type=submit]:has-text('Sign up')");
      await page.waitForSelector("nav.topnav >> text=ann@example.org");

      await page.goto(`${server.url}/app/#/settings`);
      await page.waitForSelector("#tokens >> text=No tokens yet.");
      expect(await page.isDisabled("button:has-text('Create token')")).toBe(true);
      await page.fill("#token-name", "laptop assistant");
      await page.check("input[name=token-scope][value='mcp']");
      await page.check("input[name=token-scope][value='turns:read']");
      await page.fill("#token-days", "30");
      await page.click("button:has-text('Create token')");
      const token = await page.inputValue("#token-value");
      expect(token).toMatch(/^atr_[a-z2-7]+_[a-z2-7]+$/);
      expect(await axeCheck(page)).toEqual([]);

      const row = page.locator("#tokens li", { hasText: "laptop assistant" });
      await row.waitFor();
      expect(await row.textContent()).toContain("turns:read, mcp");
      expect(await row.textContent()).toContain("never used");
      expect(await row.textContent()).toContain("expires");
      // Shown once: the list has no token, and a reload shows none.
      expect(await page.locator("#tokens ul").textContent()).not.toContain(token);
      await page.click("#tokens button:has-text('Done')");
      expect(await page.locator("#token-value").count()).toBe(0);

      const bearer = { authorization: `Bearer ${token}` };
      expect((await fetch(`${server.url}/api/files`, { headers: bearer })).status).toBe(200);
      const write = await fetch(`${server.url}/api/sessions`, {
        method: "POST",
        headers: { ...bearer, "content-type": "application/json" },
        body: "{}",
      });
      expect(write.status).toBe(403);
      const mcp = await fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: {
          ...bearer,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "x", version: "1" },
          },
        }),
      });
      expect(mcp.status).toBe(200);

      await page.reload();
      await row.waitFor();
      expect(await row.textContent()).toContain("last used");
      await row.locator("button:has-text('Revoke')").click();
      await page.waitForSelector("#tokens >> text=No tokens yet.");
      expect((await fetch(`${server.url}/api/files`, { headers: bearer })).status).toBe(401);

      // An expiry past a year is refused by the form itself; nothing is created.
      await page.fill("#token-name", "too long");
      await page.check("input[name=token-scope][value='chat']");
      await page.fill("#token-days", "400");
      await page.click("button:has-text('Create token')");
      expect(await page.$eval("#token-days", (el) => (el as HTMLInputElement).validity.rangeOverflow)).toBe(
        true,
      );
      expect(await page.locator("#token-value").count()).toBe(0);
      await page.reload();
      await page.waitForSelector("#tokens >> text=No tokens yet.");
    },
  );
});

uiSuite("no access tokens in local mode", () => {
  let server: LiveUi["server"];
  let browser: Browser;
  liveUi((live) => {
    ({ server, browser } = live);
  });

  pageTest(
    "Settings has no tokens panel",
    () => browser,
    async (page) => {
      await page.goto(`${server.url}/app/#/settings`);
      await page.waitForSelector("h2:has-text('Providers')");
      await page.waitForSelector("h2:has-text('Chat settings')");
      expect(await page.locator("#tokens").count()).toBe(0);
    },
  );
});
