/**
 * The web UI's weight and speed. Prints:
 *  - the gzipped size of what /app/ loads first (index.html, the script, the stylesheet), against the
 *    150 KB budget;
 *  - first paint of a 500-message session in headless Chromium: from clicking the session in the sidebar
 *    to the last message painted (the session routes answered from memory, so this is the UI's own
 *    cost), against the reference, the same 500 messages as plain HTML set with innerHTML in the same
 *    page (ratio), over interleaved rounds.
 *
 *   bun bench/ui.ts [--rounds 5]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright";
import { buildWeb } from "../scripts/build-web.ts";
import { parseCli } from "../server/config/cli.ts";
import { createEnvSource } from "../server/config/env.ts";
import { loadConfig } from "../server/config/index.ts";
import { startServer } from "../server/lifecycle.ts";
import { silentLogger } from "../server/log.ts";
import { fmt, median } from "./lib/stats.ts";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const rounds = Number(values.rounds);
const repo = join(import.meta.dir, "..");
const MESSAGES = 500;

await buildWeb();
const data = mkdtempSync(join(tmpdir(), "atrium-bench-ui-"));
const cli = parseCli(["--port", "0", "--data-dir", data], {}, repo);
if (cli.kind !== "serve") throw new Error("bad bench arguments");
const env = createEnvSource({});
const app = await startServer({ config: loadConfig(cli.options, env), env, log: silentLogger });

// 1. Initial load, gzipped.
const html = await (await fetch(`${app.url}/app/`)).text();
const assets = [...html.matchAll(/(?:src|href)="(\/app\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
let raw = Buffer.byteLength(html);
let gzipped = Bun.gzipSync(html).byteLength;
for (const path of assets) {
  const bytes = new Uint8Array(await (await fetch(`${app.url}${path}`)).arrayBuffer());
  raw += bytes.byteLength;
  gzipped += Bun.gzipSync(bytes).byteLength;
}
console.log(
  `initial load of /app/ (html + ${assets.length} assets): ${fmt(raw / 1024, 1)} KB raw, ${fmt(gzipped / 1024, 1)} KB gzipped (budget 150 KB)`,
);

// 2. First paint of a 500-message session.
const messages = Array.from({ length: MESSAGES }, (_, i) =>
  i % 2 === 0
    ? {
        id: `u${i}`,
        role: "user",
        parts: [{ type: "text", text: `Question ${i}: how does part ${i} work?` }],
      }
    : {
        id: `a${i}`,
        role: "assistant",
        parts: [
          {
            type: "text",
            text: `Answer ${i}: it works in **three** steps.\n\n1. read\n2. think\n3. write\n\n\`\`\`ts\nconst step = ${i};\n\`\`\``,
          },
        ],
      },
);
const session = { sessionId: "bench", sessionFile: "bench.jsonl" };
const browser = await chromium.launch({
  executablePath: process.env.APP_CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu"],
});
const page = await browser.newPage();
await page.route("**/api/chat/sessions*", (route) =>
  route.fulfill({ json: { sessions: [{ id: "bench", sessionId: "bench", title: "Bench session" }] } }),
);
await page.route("**/api/chat/session?*", (route) => route.fulfill({ json: { session, messages } }));

const ui: number[] = [];
const reference: number[] = [];
for (let round = 0; round < rounds; round++) {
  await page.goto(`${app.url}/app/#/chat`);
  await page.waitForSelector(".sessions .session-open");
  const ms = (await page.evaluate(
    (count) =>
      new Promise<number>((resolve) => {
        const started = performance.now();
        const done = () => {
          if (document.querySelectorAll("article.msg").length >= count)
            requestAnimationFrame(() => resolve(performance.now() - started));
          else requestAnimationFrame(done);
        };
        document.querySelector<HTMLButtonElement>(".sessions .session-open")?.click();
        requestAnimationFrame(done);
      }),
    MESSAGES,
  )) as number;
  ui.push(ms);
  const refMs = (await page.evaluate((count) => {
    const started = performance.now();
    const parts: string[] = [];
    for (let i = 0; i < count; i++)
      parts.push(
        `<article class="msg"><div class="msg-role">x</div><div class="markdown"><p>Answer ${i}: it works in <strong>three</strong> steps.</p><ol><li>read</li><li>think</li><li>write</li></ol><pre><code>const step = ${i};</code></pre></div></article>`,
      );
    const host = document.querySelector(".transcript") ?? document.body;
    host.innerHTML = parts.join("");
    return new Promise<number>((resolve) =>
      requestAnimationFrame(() => resolve(performance.now() - started)),
    );
  }, MESSAGES)) as number;
  reference.push(refMs);
}
const u = median(ui);
const r = median(reference);
console.log(
  `first paint of a ${MESSAGES}-message session: ${fmt(u, 1)} ms median (budget 500 ms); plain-HTML reference ${fmt(r, 1)} ms; ratio ${fmt(u / r, 1)} (${rounds} rounds)`,
);
await browser.close();
await app.stop();
rmSync(data, { recursive: true, force: true });
