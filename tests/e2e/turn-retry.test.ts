/**
 * A turn whose Python sandbox never starts fails with a sentence a person understands, and offers to
 * send it again: Retry in the web UI, `/retry` in the terminal client. The retry is a new turn under a
 * new idempotency key (the old key would only replay the failure), so once the sandbox is back it runs.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser } from "playwright";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import type { TurnSandbox } from "../../server/turns/runtime/sandbox.ts";
import type { TestApp } from "../helpers/app.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { listen } from "../helpers/listen.ts";
import { Tmux } from "../helpers/terminal.ts";
import { turnsApp } from "../helpers/turns.ts";
import { waitFor } from "../helpers/wait.ts";
import { ensureWebBuild } from "../helpers/web.ts";
import { browserTest, seriousViolations, withPage } from "./views-harness.ts";

setDefaultTimeout(120_000);

const SENTENCE = "The Python sandbox did not start: it made no progress for 0.3 s.";

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let browser: Browser | undefined;
let sandbox: TurnSandbox;
let working: InterpreterPool;

beforeAll(async () => {
  t = await turnsApp();
  server = listen(t);
  sandbox = t.family("turns").runtime.sandbox;
  working = sandbox.pool as InterpreterPool;
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await t?.close();
});

/** Until `restore`, every interpreter start hangs without progress: turns fail with SENTENCE. */
function breakSandbox(): { restore(): void } {
  sandbox.use(
    new InterpreterPool({
      warm: 0,
      isolation: "none",
      command: [process.execPath, "-e", "setInterval(() => {}, 1e6)"],
      startTimeoutMs: 300,
    }),
  );
  // The hung pool is the family's own (closed on restore); the working one is shared and kept.
  return { restore: () => sandbox.share(working) };
}

async function turnsOf(sessionId: string) {
  const response = await fetch(`${server.url}/api/sessions/${sessionId}/turns`);
  return ((await response.json()) as { items: { runId: string; status: string; input: { text: string } }[] })
    .items;
}

const CODE = "```python\nprint(6 * 7)\n```";

browserTest("web UI: a failed turn shows why, and Retry sends it again as a new turn", async () => {
  await ensureWebBuild();
  browser = await launchBrowser();
  await withPage(browser, "turn-retry", async (page) => {
    const broken = breakSandbox();
    try {
      await page.goto(`${server.url}/app/#/turns`);
      await page.getByLabel("New session title").fill("retry me");
      await page.getByLabel("New session title").press("Enter");
      await page.getByRole("heading", { name: "retry me" }).waitFor();
      await page.locator("#turn-text").fill(CODE);
      await page.locator("#turn-text").press("Enter");
      const failed = page.locator('article.turn[data-status="failed"]');
      await failed.locator(".error", { hasText: SENTENCE }).waitFor({ timeout: 60_000 });
      expect(await page.locator("body").textContent()).not.toContain("Turn is unavailable");
      expect(await seriousViolations(page)).toEqual([]);
    } finally {
      broken.restore();
    }
    await page.getByRole("button", { name: "Retry", exact: true }).click();
    await page
      .locator('article.turn[data-status="completed"]', { hasText: "42" })
      .waitFor({ timeout: 90_000 });
    // Retry is offered for the last failed turn only: the completed one after it takes it away.
    expect(await page.getByRole("button", { name: "Retry", exact: true }).count()).toBe(0);
    const sessions = (await (await fetch(`${server.url}/api/sessions`)).json()) as {
      items: { id: string; title: string }[];
    };
    const sessionId = sessions.items.find((s) => s.title === "retry me")?.id as string;
    const turns = await turnsOf(sessionId);
    expect(turns.map((turn) => [turn.status, turn.input.text])).toEqual([
      ["failed", CODE],
      ["completed", CODE],
    ]);
    expect(new Set(turns.map((turn) => turn.runId)).size).toBe(2);
  });
});

test("terminal: a failed turn shows why; /retry sends it again as a new turn", async () => {
  const broken = breakSandbox();
  const tmux = new Tmux().start(["turns", "--url", server.url]);
  try {
    await tmux.waitFor("new session (starts with your first message)");
    tmux.type(CODE);
    tmux.keys("Enter");
    const failed = await tmux.waitFor("/retry sends this message again", { timeoutMs: 60_000 });
    expect(failed).toContain("did not start: it made no progress for 0.3 s.");
    const sessionId = failed.match(/session (ses_[0-9a-f]+)/)?.[1] as string;
    broken.restore();
    tmux.type("/retry");
    tmux.keys("Enter");
    expect(await tmux.waitFor(/usage: 1 step/, { timeoutMs: 90_000 })).toMatch(/│ 42\n/);
    const turns = await waitFor(async () => {
      const now = await turnsOf(sessionId);
      return now.length === 2 && now[1]?.status === "completed" ? now : undefined;
    });
    expect(turns.map((turn) => turn.status)).toEqual(["failed", "completed"]);
    expect(new Set(turns.map((turn) => turn.runId)).size).toBe(2);
  } finally {
    broken.restore();
    tmux.close();
  }
});
