/**
 * The web UI's weight and speed. Prints:
 *  - the gzipped size of what /app/ loads first (index.html, the script, the stylesheet), against the
 *    150 KB budget;
 *  - first paint of a 500-message session in headless Chromium: from clicking the session in the sidebar
 *    to the last message painted (the session routes answered from memory, so this is the UI's own
 *    cost), against the reference, the same 500 messages as plain HTML set with innerHTML in the same
 *    page (ratio), over interleaved rounds;
 *  - first paint of a 10,000-entity search graph (30,000 relationships): from choosing the index in the
 *    search view to sigma's first frame on screen (the graph route answering from a real index), against
 *    the reference, the same route's JSON fetched and every node and edge drawn with a plain 2D canvas in
 *    the same page (ratio); the first (cold: the server lays the graph out) and the median of the rest;
 *    and the longest main-thread task from the choice until the last batch of edges is drawn (what a user
 *    would feel as a freeze);
 *  - interaction on that graph once drawn: a hover sweep, a pan (drag) and a zoom (wheel), each timed
 *    from the input to the second frame after it, against the same gestures on the two-entity graph in
 *    the same page (ratio), with the longest main-thread task during them.
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
import { seedGraph } from "./lib/ui-graph.ts";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const rounds = Number(values.rounds);
const repo = join(import.meta.dir, "..");
const MESSAGES = 500;

await buildWeb();
const data = mkdtempSync(join(tmpdir(), "atrium-bench-ui-"));
const GRAPH = { entities: 10_000, relationships: 30_000 };
await seedGraph(join(data, "app.db"), GRAPH);
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
    // A fresh container with the transcript's classes: no old nodes to remove, the same styles.
    const host = document.createElement("div");
    host.className = "transcript";
    document.body.append(host);
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

// 3. First paint of a 10,000-entity graph in the search view.
const graphPage = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
await graphPage.goto(`${app.url}/app/#/search`);
await graphPage.locator('[data-testid="graph-canvas"][data-painted="true"]').waitFor({ timeout: 60_000 });
const graphUi: number[] = [];
const graphRef: number[] = [];
const longest: number[] = [];
for (let round = 0; round < rounds + 1; round++) {
  const result = (await graphPage.evaluate(async () => {
    const tasks: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) tasks.push(entry.duration);
    });
    observer.observe({ type: "longtask" });
    const select = document.querySelector<HTMLSelectElement>("#search-index") as HTMLSelectElement;
    const choose = (name: string) => {
      select.value = name;
      select.dispatchEvent(new Event("change", { bubbles: true }));
    };
    const painted = (name: string) =>
      new Promise<void>((resolve) => {
        const check = () => {
          const title = document.querySelector("#graph-title")?.textContent ?? "";
          const canvas = document.querySelector('[data-testid="graph-canvas"]');
          if (title.includes(`"${name}"`) && canvas?.getAttribute("data-painted") === "true") resolve();
          else requestAnimationFrame(check);
        };
        check();
      });
    choose("a-small");
    await painted("a-small");
    tasks.length = 0;
    tasks.length = 0;
    const started = performance.now();
    choose("big");
    await painted("big");
    const ms = performance.now() - started;
    // The rest of the edges arrive in batches after the first picture: the page must stay responsive
    // until the last (the longest task counts them), and the reference runs after it.
    await new Promise<void>((resolve) => {
      const done = () =>
        document.querySelector('[data-testid="graph-canvas"]')?.getAttribute("data-complete") === "true"
          ? resolve()
          : setTimeout(done, 50);
      done();
    });
    observer.disconnect();
    return { ms, longest: Math.max(0, ...tasks) };
  })) as { ms: number; longest: number };
  const refMs = (await graphPage.evaluate(async () => {
    const started = performance.now();
    const g = await (await fetch("/search/indexes/big/graph")).json();
    const canvas = document.createElement("canvas");
    canvas.width = 800;
    canvas.height = 450;
    document.body.append(canvas);
    const c = canvas.getContext("2d") as CanvasRenderingContext2D;
    const xs: number[] = g.nodes.x;
    const ys: number[] = g.nodes.y;
    const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const k = Math.min(800 / (x1 - x0 || 1), 450 / (y1 - y0 || 1));
    const px = (i: number) => ((xs[i] as number) - x0) * k;
    const py = (i: number) => ((ys[i] as number) - y0) * k;
    c.strokeStyle = "#ccc";
    c.beginPath();
    for (let i = 0; i < g.edges.source.length; i++) {
      c.moveTo(px(g.edges.source[i]), py(g.edges.source[i]));
      c.lineTo(px(g.edges.target[i]), py(g.edges.target[i]));
    }
    c.stroke();
    for (let i = 0; i < xs.length; i++) {
      c.fillStyle = `hsl(${(g.nodes.community[i] * 47) % 360} 60% 50%)`;
      c.beginPath();
      c.arc(px(i), py(i), 2 + Math.sqrt(g.nodes.degree[i]) * 0.5, 0, 2 * Math.PI);
      c.fill();
    }
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const ms = performance.now() - started;
    canvas.remove();
    return ms;
  })) as number;
  graphUi.push(result.ms);
  longest.push(result.longest);
  graphRef.push(refMs);
}

const [cold, ...warm] = graphUi;
const gu = median(warm);
const gr = median(graphRef.slice(1));
console.log(
  `first paint of a ${fmt(GRAPH.entities)}-entity graph (${fmt(GRAPH.relationships)} relationships): ${fmt(gu, 1)} ms median ` +
    `(cold, the server laying it out: ${fmt(cold as number, 1)} ms); plain-canvas reference ${fmt(gr, 1)} ms; ratio ${fmt(gu / gr, 1)}; ` +
    `longest main-thread task ${fmt(Math.max(...longest), 1)} ms (${rounds} rounds)`,
);

// 4. Pan, zoom and hover on the drawn graph, against the same gestures on the two-entity one.
async function gestures(name: string): Promise<{ ms: number[]; longest: number }> {
  await graphPage.evaluate(async (wanted) => {
    const select = document.querySelector<HTMLSelectElement>("#search-index") as HTMLSelectElement;
    select.value = wanted;
    select.dispatchEvent(new Event("change", { bubbles: true }));
  }, name);
  await graphPage.locator('[data-testid="graph-canvas"][data-complete="true"]').waitFor({ timeout: 120_000 });
  await graphPage.waitForFunction(
    (wanted) => (document.querySelector("#graph-title")?.textContent ?? "").includes(`"${wanted}"`),
    name,
  );
  const canvas = graphPage.locator('[data-testid="graph-canvas"]');
  await canvas.scrollIntoViewIfNeeded();
  const box = (await canvas.boundingBox()) as { x: number; y: number; width: number; height: number };
  const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
  await graphPage.evaluate(() => {
    const w = window as unknown as { __tasks: number[] };
    w.__tasks = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) w.__tasks.push(entry.duration);
    }).observe({ type: "longtask" });
  });
  const frames = () =>
    graphPage.evaluate(
      () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(null)))),
    );
  const timed = async (gesture: () => Promise<void>) => {
    const started = performance.now();
    await gesture();
    await frames();
    return performance.now() - started;
  };
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    ms.push(await timed(() => graphPage.mouse.move(cx - 100 + i * 40, cy - 60, { steps: 5 })));
    await graphPage.mouse.move(cx, cy);
    ms.push(
      await timed(async () => {
        await graphPage.mouse.down();
        await graphPage.mouse.move(cx + 80, cy + 40, { steps: 5 });
        await graphPage.mouse.up();
      }),
    );
    ms.push(await timed(() => graphPage.mouse.wheel(0, i % 2 === 0 ? -240 : 240)));
    await graphPage.waitForTimeout(350); // sigma's zoom animation, and clicks apart
  }
  const longest = (await graphPage.evaluate(() =>
    Math.max(0, ...(window as unknown as { __tasks: number[] }).__tasks),
  )) as number;
  return { ms, longest };
}
// The small one first: "big" is showing, and choosing it again would time gestures against a redraw.
const smallGestures = await gestures("a-small");
const bigGestures = await gestures("big");
console.log(
  `pan, zoom and hover on the ${fmt(GRAPH.entities)}-entity graph: ${fmt(median(bigGestures.ms), 1)} ms median from input to the second frame ` +
    `(slowest ${fmt(Math.max(...bigGestures.ms), 1)} ms); two-entity reference ${fmt(median(smallGestures.ms), 1)} ms; ratio ` +
    `${fmt(median(bigGestures.ms) / median(smallGestures.ms), 1)}; longest main-thread task ${fmt(bigGestures.longest, 1)} ms ` +
    `(${rounds * 3} gestures)`,
);

await browser.close();
await app.stop();
rmSync(data, { recursive: true, force: true });
