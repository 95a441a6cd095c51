/**
 * Browser tests of the web UI: a real app on a real port, Debian's Chromium driven by Playwright, the
 * built UI. `uiSuite` skips with one loud line when Chromium is missing outside CI (in CI, env CI set,
 * the launch fails the suite instead). `pageTest` opens a fresh page, and on failure saves a screenshot
 * under a temp folder and names it in the error. `axeCheck` runs axe-core in the page and lists the
 * serious and critical violations.
 */
import { afterAll, beforeAll, describe, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright";
import { createTestApp, type TestApp } from "./app.ts";
import { CHROMIUM, launchBrowser } from "./browser.ts";
import { listen } from "./listen.ts";
import { ensureWebBuild } from "./web.ts";

export const HAS_BROWSER = existsSync(CHROMIUM) || Boolean(process.env.CI);
let warned = false;

/** `describe`, or a skip with one loud line when there is no Chromium here and this is not CI. */
export function uiSuite(name: string, body: () => void): void {
  if (HAS_BROWSER) {
    describe(name, body);
    return;
  }
  if (!warned) {
    warned = true;
    console.warn(
      `\n!!! SKIPPING the browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium) !!!\n`,
    );
  }
  describe.skip(name, body);
}

export interface LiveUi {
  t: TestApp;
  server: { url: string; stop(): Promise<void> };
  browser: Browser;
}

/**
 * Inside a `uiSuite`: the built UI, an app from `make` listening on a real port and a browser, started
 * before the suite's tests and closed after them; `use` receives them once they run.
 */
export function liveUi(use: (live: LiveUi) => void, make: () => Promise<TestApp> = createTestApp): void {
  let live: Partial<LiveUi> = {};
  beforeAll(async () => {
    await ensureWebBuild();
    const t = await make();
    live = { t, server: listen(t), browser: await launchBrowser() };
    use(live as LiveUi);
  });
  afterAll(async () => {
    await live.browser?.close();
    await live.server?.stop();
    await live.t?.close();
  });
}

/** Opens the chat view with model `modelId` picked in the model menu. */
export async function openChat(page: Page, baseUrl: string, modelId: string): Promise<void> {
  await page.goto(`${baseUrl}/app/#/chat`);
  await page.waitForSelector(`select option[value="${modelId}"]`, { state: "attached" });
  await page.selectOption("section.main-pane .toolbar select >> nth=0", modelId);
}

/** Types a message in the composer and sends it with Enter. */
export async function sendMessage(page: Page, text: string): Promise<void> {
  await page.fill("#composer-input", text);
  await page.press("#composer-input", "Enter");
}

export const SHOTS = join(tmpdir(), "atrium-ui-failures");

/** A test with a fresh page; a failure saves a full-page screenshot and names it in the error. */
export function pageTest(
  name: string,
  browser: () => Browser,
  body: (page: Page) => Promise<void>,
  timeout = 30_000,
): void {
  test(
    name,
    async () => {
      const page = await browser().newPage();
      page.setDefaultTimeout(Math.min(10_000, timeout / 2));
      try {
        await body(page);
      } catch (error) {
        mkdirSync(SHOTS, { recursive: true });
        const file = join(SHOTS, `${name.replace(/[^\w]+/g, "-").slice(0, 80)}-${Date.now()}.png`);
        await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
        (error as Error).message += `\n(screenshot: ${file})`;
        throw error;
      } finally {
        await page.close();
      }
    },
    timeout,
  );
}

const AXE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/**
 * axe-core's serious and critical violations on the page, as `rule: target` lines. The script is
 * evaluated through the DevTools protocol, which the page's CSP does not govern (no inline script).
 */
export async function axeCheck(page: Page): Promise<string[]> {
  await page.evaluate(`${AXE}\n;0`);
  const violations = (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then(r => r.violations.map(v => ({ id: v.id, impact: v.impact, targets: v.nodes.map(n => n.target.join(' ')) })))",
  )) as { id: string; impact: string; targets: string[] }[];
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.targets.join(", ")}`);
}
