/**
 * The agents family's speed, against references measured in the same run:
 *
 * 1. WebSocket message → first `stream` frame (offline model, one agent), p50/p99 over N messages,
 *    against a bare Bun WebSocket echo server's round trip (ratio of p50s). Both servers run in one child
 *    process; the rounds interleave.
 * 2. Idle connections: C concurrent /v1/chat sockets held open, with the server's RSS before and after.
 * 3. Memory search over E entries: GET /v1/memory/search p50/p99 (full text, full text + tag), against
 *    the same FTS5 query run directly on the database file (ratio of p50s).
 *
 *   bun bench/agents.ts [--messages 1000] [--connections 2000] [--entries 100000]
 */
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { rssMiB } from "./lib/process.ts";
import { fmt, percentile } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "1000" },
    connections: { type: "string", default: "2000" },
    entries: { type: "string", default: "100000" },
  },
});
const MESSAGES = Number(values.messages);
const CONNECTIONS = Number(values.connections);
const ENTRIES = Number(values.entries);

const child = Bun.spawn([process.execPath, join(import.meta.dir, "lib", "agents-servers.ts")], {
  stdout: "pipe",
  stderr: "inherit",
});
const first = new TextDecoder().decode((await child.stdout.getReader().read()).value);
const info = JSON.parse(first) as { app: number; echo: number; dataDir: string; pid: number };
const base = `http://127.0.0.1:${info.app}`;
const wsBase = `ws://127.0.0.1:${info.app}`;

const serverRss = () => rssMiB(info.pid);

async function post(path: string, body: unknown) {
  const r = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json() as Promise<{ id: string }>;
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.onopen = () => resolve(ws);
    ws.onerror = () => reject(new Error(`cannot open ${url}`));
  });
}

/** Resolves with the first message for which `take` returns a value. */
function until<T>(ws: WebSocket, take: (data: string) => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    ws.onmessage = (event) => {
      const value = take(String(event.data));
      if (value !== undefined) resolve(value);
    };
  });
}

async function latency(agentId: string) {
  const chat = await open(`${wsBase}/v1/chat?target_id=${agentId}&target_type=agent`);
  await until(chat, (d) => (d.includes('"connected"') ? true : undefined));
  const echo = await open(`ws://127.0.0.1:${info.echo}`);
  const atrium: number[] = [];
  const bare: number[] = [];
  const frame = JSON.stringify({ type: "message", content: "How do I configure a model?" });
  const rounds = 10;
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < MESSAGES / rounds; i++) {
      const started = performance.now();
      let firstAt = 0;
      const done = until(chat, (d) => {
        if (!firstAt && d.includes('"stream"')) firstAt = performance.now();
        return d.includes('"is_complete":true') ? true : undefined;
      });
      chat.send(frame);
      await done;
      atrium.push(firstAt - started);
    }
    for (let i = 0; i < MESSAGES / rounds; i++) {
      const started = performance.now();
      const back = until(echo, () => true);
      echo.send(frame);
      await back;
      bare.push(performance.now() - started);
    }
  }
  chat.close();
  echo.close();
  const p50 = percentile(atrium, 50);
  const echo50 = percentile(bare, 50);
  console.log(
    `WebSocket message → first stream frame (offline model), ${atrium.length} messages, interleaved rounds`,
  );
  console.log(
    `  bare Bun echo round trip  p50 ${fmt(echo50, 3)} ms  p99 ${fmt(percentile(bare, 99), 3)} ms\n` +
      `  Atrium /v1/chat           p50 ${fmt(p50, 3)} ms  p99 ${fmt(percentile(atrium, 99), 3)} ms   ratio (p50) ${fmt(p50 / echo50, 1)}x`,
  );
}

async function idle(agentId: string) {
  const before = serverRss();
  const sockets: WebSocket[] = [];
  const started = performance.now();
  for (let i = 0; i < CONNECTIONS; i += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, CONNECTIONS - i) }, async () => {
        const ws = await open(`${wsBase}/v1/chat?target_id=${agentId}&target_type=agent`);
        await until(ws, (d) => (d.includes('"connected"') ? true : undefined));
        return ws;
      }),
    );
    sockets.push(...batch);
  }
  const openedMs = performance.now() - started;
  await Bun.sleep(1000);
  const after = serverRss();
  const health = await fetch(`${base}/health`);
  console.log(
    `Idle connections: ${sockets.length} /v1/chat sockets open and connected in ${fmt(openedMs)} ms`,
  );
  console.log(
    `  server RSS ${fmt(before, 1)} MiB before, ${fmt(after, 1)} MiB with them open (+${fmt(((after - before) * 1024) / sockets.length, 1)} KiB per socket); /health ${health.status}`,
  );
  for (const ws of sockets) ws.close();
}

const WORDS = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}x`);
function word(random: () => number) {
  // Zipf-like: a few words are common, most are rare.
  return WORDS[Math.floor(WORDS.length * random() ** 3)] ?? "w0x";
}
function rng(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

async function memorySearch(agentId: string) {
  const random = rng(42);
  const db = new Database(join(info.dataDir, "app.db"));
  db.exec("PRAGMA busy_timeout = 5000");
  const insert = db.prepare(
    `INSERT INTO memory_entries (id, owner_id, holder_id, holder_type, type, content, tags, metadata, importance, created_at, updated_at)
     VALUES (?, 'local', ?, 'agent', 'INSIGHTS', ?, ?, '{}', ?, ?, ?)`,
  );
  const now = new Date().toISOString();
  const started = performance.now();
  db.transaction(() => {
    for (let i = 0; i < ENTRIES; i++) {
      const content = Array.from({ length: 20 }, () => word(random)).join(" ");
      const tags = JSON.stringify([`t${Math.floor(random() * 20)}`, `t${Math.floor(random() * 20)}`]);
      insert.run(`mem_bench_${i}`, agentId, content, tags, random(), now, now);
    }
  })();
  const loadMs = performance.now() - started;
  const queries = Array.from({ length: 300 }, () => `${word(random)} ${word(random)}`);
  const raw = db.prepare(
    `SELECT m.id, bm25(memory_fts, 1.0, 0.5) AS score FROM memory_fts JOIN memory_entries m ON m.rowid = memory_fts.rowid
     WHERE memory_fts MATCH ? AND memory_fts.owner_id = 'local' ORDER BY score LIMIT 10`,
  );
  const time = async (fn: (q: string) => Promise<unknown> | unknown) => {
    const out: number[] = [];
    for (const q of queries) {
      const t0 = performance.now();
      await fn(q);
      out.push(performance.now() - t0);
    }
    return out;
  };
  const direct = await time((q) =>
    raw.all(
      q
        .split(" ")
        .map((w) => `"${w}"`)
        .join(" OR "),
    ),
  );
  const search = (extra: string) => (q: string) =>
    fetch(
      `${base}/v1/memory/search?content_query=${encodeURIComponent(q)}&owner_id=${agentId}&limit=10${extra}`,
    ).then((r) => r.json());
  const fullText = await time(search(""));
  const tagged = await time(search("&tags=t3"));
  const tagOnly = await time(() =>
    fetch(`${base}/v1/memory/search?tags=t3&tags=t7&limit=10`).then((r) => r.json()),
  );
  db.close();
  const d50 = percentile(direct, 50);
  console.log(
    `Memory search over ${fmt(ENTRIES)} entries (loaded in ${fmt(loadMs)} ms), ${queries.length} queries of 2 words, limit 10`,
  );
  console.log(
    `  direct FTS5 query (bun:sqlite)      p50 ${fmt(d50, 3)} ms  p99 ${fmt(percentile(direct, 99), 3)} ms`,
  );
  for (const [name, samples] of [
    ["GET /v1/memory/search content_query ", fullText],
    ["  + tags=t3                         ", tagged],
    ["  tags=t3&tags=t7 only (no text)    ", tagOnly],
  ] as const) {
    const p50 = percentile(samples, 50);
    console.log(
      `  ${name} p50 ${fmt(p50, 3)} ms  p99 ${fmt(percentile(samples, 99), 3)} ms   ratio (p50) ${fmt(p50 / d50, 1)}x`,
    );
  }
}

try {
  const agent = await post("/v1/agents", { name: "Bench", role: "benchmark agent" });
  await latency(agent.id);
  await idle(agent.id);
  await memorySearch(agent.id);
} finally {
  child.kill();
  await child.exited;
  rmSync(info.dataDir, { recursive: true, force: true });
}
