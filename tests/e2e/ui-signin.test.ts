/**
 * Protected mode in Chromium: the UI shows the sign-in screen until someone signs in; a wrong password
 * is shown in place; sign-up (open sign-up) lands in the app with the session cookie, whose chat calls
 * then pass; sign-out returns to the screen. axe-core passes on the screen.
 */
import { expect } from "bun:test";
import type { Browser } from "playwright";
import { authApp, PASSWORD } from "../auth/auth-app.ts";
import { axeCheck, type LiveUi, liveUi, pageTest, uiSuite } from "../helpers/ui.ts";

uiSuite("sign-in UI (protected mode)", () => {
  let server: LiveUi["server"];
  let browser: Browser;
  liveUi((live) => {
    ({ server, browser } = live);
  }, authApp);

  pageTest(
    "sign-in screen until signed in; a wrong password in place; sign up, use the app, sign out",
    () => browser,
    async (page) => {
      await page.goto(`${server.url}/app/`);
      await page.waitForSelector("h1:has-text('Sign in to Atrium')");
      expect(await page.locator("nav.topnav").count()).toBe(0);
      expect(await axeCheck(page)).toEqual([]);

      await page.fill("#auth-email", "ann@example.org");
      await page.fill("#auth-password", "wrong password here");
      await page.click("button[type=submit]");
      await page.waitForSelector("[role=alert] >> text=Invalid email or password");

      await page.click("button:has-text('Create an account')");
      await page.fill("#auth-email", "ann@example.org");
      await page.fill("#auth-password", PASSWORD);
      await page.click("button[type=submit]:has-text('Sign up')");
      await page.waitForSelector("nav.topnav >> text=ann@example.org");
      // The session cookie is HttpOnly: the page cannot read it, yet its API calls carry it.
      expect(await page.evaluate(() => document.cookie)).not.toContain("atrium_session");
      await page.waitForSelector(".sidebar >> text=No conversations yet");
      expect(await page.locator(".transcript [role=alert]").count()).toBe(0);

      await page.click("button:has-text('Sign out')");
      await page.waitForSelector("h1:has-text('Sign in to Atrium')");
      expect((await fetch(`${server.url}/api/chat/sessions`)).status).toBe(401);
    },
  );
});
