/**
 * What the views' browser tests share: whether Chromium is here (outside CI, a missing browser skips
 * them with one loud line; in CI they run and fail), a page per test that saves a screenshot under a
 * temp folder when the test fails, files dropped on an element as a real DataTransfer, and axe-core
 * run in the page (injected through the DevTools protocol, which the UI's CSP does not govern).
 */

import { test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright";
import { CHROMIUM } from "../helpers/browser.ts";

const missing = !existsSync(CHROMIUM);
if (missing && !process.env.CI) {
  console.warn(
    `\n!!! SKIPPING the web UI view tests (tests/e2e/ui-views.test.ts): no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set APP_CHROMIUM_PATH); in CI they fail instead\n`,
  );
}
/** True when Chromium is missing outside CI: the tests and their setup are skipped. */
export const skipBrowser = missing && !process.env.CI;
/** `test`, or `test.skip` when Chromium is missing outside CI. */
export const browserTest = skipBrowser ? test.skip : test;

let shots: string | undefined;

/** Runs `body` on a fresh page; on failure saves `<name>.png` in a temp folder, says where, rethrows. */
export async function withPage(
  browser: Browser,
  name: string,
  body: (page: Page) => Promise<void>,
): Promise<void> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  try {
    await body(page);
    if (errors.length > 0) throw new Error(`errors in the page: ${errors.join("; ")}`);
  } catch (error) {
    shots ??= mkdtempSync(join(tmpdir(), "atrium-ui-shots-"));
    const path = join(shots, `${name.replace(/[^A-Za-z0-9_-]+/g, "-")}.png`);
    await page.screenshot({ path, fullPage: true }).catch(() => {});
    console.error(`screenshot of the failed test "${name}": ${path}`);
    throw error;
  } finally {
    await page.close();
  }
}

/** Drops text files on the element, as a user dragging them from the desktop would. */
export async function dropFiles(
  page: Page,
  selector: string,
  files: { name: string; text: string; type?: string }[],
): Promise<void> {
  const transfer = await page.evaluateHandle((list) => {
    const data = new DataTransfer();
    for (const f of list) data.items.add(new File([f.text], f.name, { type: f.type ?? "text/plain" }));
    return data;
  }, files);
  await page.dispatchEvent(selector, "dragover", { dataTransfer: transfer });
  await page.dispatchEvent(selector, "drop", { dataTransfer: transfer });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** The serious and critical axe-core violations on the page as it is now (rule id: offending nodes). */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is injected as a global
    const axe = (window as any).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[]).map(
      (v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(" ")) }),
    );
  });
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.targets.join(", ")}`);
}

/** Whether the focused element shows a focus ring (an outline that is not `none`). */
export function focusVisible(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const el = document.activeElement;
    return el !== null && el !== document.body && getComputedStyle(el).outlineStyle !== "none";
  });
}
