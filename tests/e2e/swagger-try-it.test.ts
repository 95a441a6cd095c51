/**
 * Swagger UI runs every family: in Chromium, on a real server process, "Try it out" → "Execute" on one
 * state-changing route per family, with only what the page offers (the declared examples and required
 * headers; the turn's session id typed in as a user would), answers 2xx. The page is opened as
 * /swagger/, the form that once failed to find its document. All of it runs under the page's
 * Content-Security-Policy without one violation, and another page cannot frame it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright";
import { REPO_ROOT } from "../helpers/app.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { type ServerProcess, startServerProcess, waitForOk } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir("atrium-swagger-");
let server: ServerProcess;
let browser: Browser;
let page: Page;
/** Every CSP violation the page reports (directive and what was blocked), from the first byte on. */
const violations: string[] = [];

beforeAll(async () => {
  server = await startServerProcess(["--port", "0", "--data-dir", join(dir.path, "data")], {
    env: { APP_SANDBOX_WARM: "1" },
  });
  await waitForOk(`${server.url}/health/ready`);
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.exposeFunction("reportViolation", (directive: string, blocked: string) =>
    violations.push(`${directive} ${blocked}`),
  );
  // Injected by the browser itself (not subject to the page's policy), before the page's own scripts.
  await page.addInitScript(() =>
    document.addEventListener("securitypolicyviolation", (e) =>
      (window as unknown as { reportViolation(d: string, b: string): void }).reportViolation(
        e.violatedDirective,
        e.blockedURI,
      ),
    ),
  );
  const response = await page.goto(`${server.url}/swagger/`);
  expect(response?.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
  await page.waitForSelector(".opblock-summary-path");
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.proc.kill("SIGTERM");
  await server?.exited;
  dir.remove();
});

/** Opens an operation, presses "Try it out", fills what the test names, presses "Execute": the status. */
async function tryItOut(method: string, path: string, fill: Record<string, string> = {}): Promise<number> {
  const block = page.locator(`.opblock-${method}`).filter({
    has: page.locator(`.opblock-summary-path[data-path="${path}"]`),
  });
  await block.locator(".opblock-summary").first().click();
  await block.locator(".try-out__btn").click();
  for (const [placeholder, value] of Object.entries(fill))
    await block.locator(`input[placeholder="${placeholder}"]`).fill(value);
  await block.locator(".execute").click();
  const status = block.locator(".live-responses-table tr.response .response-col_status").first();
  await status.waitFor({ timeout: 60_000 });
  return Number((await status.textContent())?.trim());
}

test("chat: POST /api/chat runs a turn from the page", async () => {
  expect(await tryItOut("post", "/api/chat")).toBe(200);
}, 90_000);

test("turns: POST /api/sessions/{session_id}/turns runs a turn with the declared Idempotency-Key", async () => {
  const session = await fetch(`${server.url}/api/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title: "from swagger" }),
  });
  const { id } = (await session.json()) as { id: string };
  const block = page.locator(".opblock-post").filter({
    has: page.locator('.opblock-summary-path[data-path="/api/sessions/{session_id}/turns"]'),
  });
  expect(await tryItOut("post", "/api/sessions/{session_id}/turns", { session_id: id })).toBe(200);
  // The turn ran: the response body shows the stream's end and the example's output.
  const body = await block
    .locator(".live-responses-table tr.response .response-col_description")
    .first()
    .textContent();
  expect(body).toContain("[DONE]");
  expect(body).toContain("45");
}, 90_000);

test("search: POST /search/local answers from the page, over the index docs/search.md's Try it builds", async () => {
  // The Try it step, as written there: the index command over the demo corpus, beside the running server.
  const built = Bun.spawnSync(
    [
      process.execPath,
      "server/main.ts",
      "index",
      "docs/demo-corpus",
      "--name",
      "carol",
      "--data-dir",
      join(dir.path, "data"),
    ],
    { cwd: REPO_ROOT, stdout: "pipe", stderr: "pipe" },
  );
  expect(built.exitCode).toBe(0);
  expect(await tryItOut("post", "/search/local")).toBe(200);
  const block = page.locator(".opblock-post").filter({
    has: page.locator('.opblock-summary-path[data-path="/search/local"]'),
  });
  const body = await block
    .locator(".live-responses-table tr.response .response-col_description")
    .first()
    .textContent();
  expect(body).toContain("Marley");
}, 90_000);

test("agents: POST /v1/agents creates an agent from the page", async () => {
  const status = await tryItOut("post", "/v1/agents");
  expect(status).toBeGreaterThanOrEqual(200);
  expect(status).toBeLessThan(300);
  const agents = (await (await fetch(`${server.url}/v1/agents`)).json()) as { agents: { name: string }[] };
  expect(agents.agents.map((agent) => agent.name)).toContain("Ada");
}, 60_000);

test("the page and every Try it out above ran under its Content-Security-Policy without a violation", async () => {
  // A request body's schema view too, so its rendering runs under the policy as well.
  const block = page.locator(".opblock-post").filter({
    has: page.locator('.opblock-summary-path[data-path="/v1/agents"]'),
  });
  await block.locator(".tablinks", { hasText: "Schema" }).first().click();
  await block.locator(".model-box").first().waitFor();
  expect(violations).toEqual([]);
});

test("another page cannot frame Swagger UI (frame-ancestors 'none')", async () => {
  const framer = await browser.newPage();
  const refused = framer.waitForEvent("console", (m) => m.text().includes("frame-ancestors"));
  await framer.setContent(`<iframe src="${server.url}/swagger/"></iframe>`);
  expect((await refused).text()).toContain("frame-ancestors 'none'");
  const frame = framer.frames().find((f) => f !== framer.mainFrame());
  expect(await frame?.locator("#swagger-ui").count()).toBe(0);
  await framer.close();
});
