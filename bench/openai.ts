import { parseArgs } from "node:util";
import { liveApp } from "./lib/live-app.ts";
import { fmt, median, percentile, sample } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { n: { type: "string", default: "100" }, rounds: { type: "string", default: "5" } },
});
const N = Number(values.n);
const ROUNDS = Number(values.rounds);

const live = await liveApp("openai");
const { app, base } = live;
const headers = { "content-type": "application/json" };

async function post(path: string, body: unknown, last: string) {
  const response = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok || !text.includes(last))
    throw new Error(`${path}: ${response.status} ${text.slice(-200)}`);
}

const openai = () =>
  post(
    "/v1/chat/completions",
    { model: "offline/offline", messages: [{ role: "user", content: "hello" }], stream: true },
    "[DONE]",
  );
const chat = () => post("/api/chat", { message: "hello", model: "offline/offline" }, '"type":"done"');

// Warm both paths (JIT, SQLite's statement cache, chat's first session).
await sample(openai, 20);
await sample(chat, 20);

console.log(
  `streaming /v1/chat/completions ÷ POST /api/chat, offline model (${N} requests × ${ROUNDS} rounds)`,
);
const a: number[] = [];
const b: number[] = [];
const ratios: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const x = await sample(openai, N);
  const y = await sample(chat, N);
  a.push(...x);
  b.push(...y);
  ratios.push(median(x) / median(y));
}
console.log(
  `openai p50 ${fmt(median(a), 2)} ms p99 ${fmt(percentile(a, 99), 2)} ms | chat p50 ${fmt(median(b), 2)} ms p99 ${fmt(percentile(b, 99), 2)} ms | ratio ${fmt(median(a) / median(b), 2)} (rounds ${ratios.map((r) => fmt(r, 2)).join(" ")})`,
);

await app.elysia.server?.stop(true);
await live.close();
