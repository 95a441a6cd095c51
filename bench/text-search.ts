/**
 * How closely PostgreSQL's text search ranks like SQLite's FTS5 BM25 (the reference, as the server uses
 * it: `porter unicode61`) on the same corpus in one run: the top-10 overlap of (a) BM25 computed in SQL
 * over a GIN-indexed tsvector (server/storage/db/text-search.ts) and (b) plain `ts_rank`, each against
 * FTS5's `bm25()`. The corpus is the committed public-domain books (tests/fixtures/books) cut into
 * paragraphs; the queries are 2–4 word spans drawn from the corpus with a fixed seed. Then memory search
 * as the server runs it (`MemoryStore.search`, server/agents/stores/memory.ts) on an app of each engine,
 * the paragraphs as one agent's memories (tagged with their book and a word of their own, as tags weigh
 * half on FTS5): top-10 overlap with SQLite's and the median search on each. Needs Debian's PostgreSQL
 * (a throwaway cluster, as the tests start one).
 *
 *   bun bench/text-search.ts [--queries 60]
 */
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type MemoryRecord, MemoryStore, matchExpression } from "../server/agents/stores/memory.ts";
import { openPostgres } from "../server/storage/db/postgres.ts";
import {
  bm25Query,
  TEXT_SEARCH_SETUP,
  TS_CONFIG,
  textSearchValues,
} from "../server/storage/db/text-search.ts";
import { createTestApp } from "../tests/helpers/app.ts";
import { freshPostgresDatabase, stopPostgres } from "../tests/helpers/postgres.ts";
import { fmt, median } from "./lib/stats.ts";

const { values } = parseArgs({ options: { queries: { type: "string", default: "60" } } });
const QUERIES = Number(values.queries);
const BOOKS = join(import.meta.dir, "../tests/fixtures/books");

const paragraphs: string[] = [];
const books: string[] = [];
for (const book of ["a_christmas_carol.txt", "frankenstein.txt", "pride_and_prejudice.txt", "cape_cod.txt"]) {
  const text = readFileSync(join(BOOKS, book), "utf8").replace(/\r\n/g, "\n");
  for (const p of text.split(/\n\s*\n/)) {
    const clean = p.replace(/\s+/g, " ").trim();
    if (clean.length >= 80) {
      paragraphs.push(clean);
      books.push(book.replace(/\.txt$/, ""));
    }
  }
}

// A fixed-seed generator (mulberry32), so every run asks the same questions.
let seed = 27;
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const queries: string[] = [];
while (queries.length < QUERIES) {
  const words = (paragraphs[Math.floor(random() * paragraphs.length)] as string).match(/[A-Za-z]{3,}/g) ?? [];
  const span = 2 + Math.floor(random() * 3);
  if (words.length < span) continue;
  const at = Math.floor(random() * (words.length - span));
  queries.push(words.slice(at, at + span).join(" "));
}

/** The share of the reference's top results that the other ranking also returns. */
const overlapOf = <T>(ref: T[], other: T[]) =>
  ref.length === 0 ? 1 : other.filter((id) => ref.includes(id)).length / ref.length;
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

// SQLite FTS5, as the server's search tables are declared.
const lite = new Database(":memory:");
lite.exec("CREATE VIRTUAL TABLE docs USING fts5 (body, tokenize = 'porter unicode61')");
const add = lite.prepare("INSERT INTO docs (rowid, body) VALUES (?, ?)");
lite.transaction(() => {
  for (const [i, p] of paragraphs.entries()) add.run(i + 1, p);
})();
const ftsQuery = (q: string) => (q.toLowerCase().match(/[a-z0-9]+/g) ?? []).map((w) => `"${w}"`).join(" OR ");
const ftsTop = lite.prepare("SELECT rowid AS id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 10");

const db = openPostgres(await freshPostgresDatabase());
try {
  await db.exec(TEXT_SEARCH_SETUP);
  await db.exec(
    "CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL, tsv tsvector NOT NULL, len INTEGER NOT NULL)",
  );
  await db.tx(async (tx) => {
    for (let i = 0; i < paragraphs.length; i++) {
      await tx.run(`INSERT INTO docs (id, body, tsv, len) SELECT ?, ?, ${textSearchValues("?")}`, [
        i + 1,
        paragraphs[i],
        paragraphs[i],
      ]);
    }
  });
  await db.exec("CREATE INDEX docs_tsv ON docs USING gin (tsv); ANALYZE docs");
  const bm25 = bm25Query({ table: "docs", columns: "t.id", limit: 10 });
  const tsRank = `SELECT id FROM docs, (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS tq
      FROM unnest(to_tsvector('${TS_CONFIG}', ?))) q WHERE tsv @@ q.tq ORDER BY ts_rank(tsv, q.tq) DESC, id LIMIT 10`;

  const scores = { bm25: [] as number[], tsRank: [] as number[] };
  const times = { fts5: [] as number[], bm25: [] as number[], tsRank: [] as number[] };
  for (const q of queries) {
    let t = performance.now();
    const ref = (ftsTop.all(ftsQuery(q)) as { id: number }[]).map((r) => r.id);
    times.fts5.push(performance.now() - t);
    t = performance.now();
    const mine = (await db.all<{ id: number }>(bm25, [q])).map((r) => r.id);
    times.bm25.push(performance.now() - t);
    t = performance.now();
    const plain = (await db.all<{ id: number }>(tsRank, [q])).map((r) => r.id);
    times.tsRank.push(performance.now() - t);
    scores.bm25.push(overlapOf(ref, mine));
    scores.tsRank.push(overlapOf(ref, plain));
  }
  console.log(`${paragraphs.length} paragraphs, ${queries.length} queries; top-10 overlap with FTS5 bm25():`);
  console.log(`  PostgreSQL BM25 in SQL  ${mean(scores.bm25).toFixed(3)}`);
  console.log(`  PostgreSQL ts_rank      ${mean(scores.tsRank).toFixed(3)}`);
  const fts = median(times.fts5);
  console.log(
    `median query: FTS5 ${fmt(fts, 2)} ms; BM25 in SQL ${fmt(median(times.bm25), 2)} ms (${fmt(median(times.bm25) / fts, 1)}×); ts_rank ${fmt(median(times.tsRank), 2)} ms (${fmt(median(times.tsRank) / fts, 1)}×)`,
  );
  await memorySearch();
} finally {
  await db.close();
  await stopPostgres();
}

/** Memory search on each engine's app, the paragraphs as one agent's memories: overlap and speed. */
async function memorySearch(): Promise<void> {
  const apps = [
    await createTestApp(),
    await createTestApp({ env: { APP_DATABASE_URL: await freshPostgresDatabase() } }),
  ];
  try {
    const now = new Date().toISOString();
    const stores = apps.map((t) => new MemoryStore(t.ctx.database));
    for (const [e, t] of apps.entries()) {
      const store = stores[e] as MemoryStore;
      for (const [i, content] of paragraphs.entries()) {
        const own = (content.toLowerCase().match(/[a-z]{6,}/g) ?? [])[1] ?? "none";
        const entry: MemoryRecord = {
          id: `mem_${i}`,
          holder_id: "agent_bench",
          holder_type: "agent",
          type: "CONTEXT",
          content,
          tags: [books[i] as string, own],
          metadata: {},
          importance: 0.5,
          created_at: now,
          updated_at: now,
        };
        await store.insert("local", entry);
      }
      if (e === 1) await t.ctx.database.exec("ANALYZE");
    }
    const scores: number[] = [];
    const times = [[], []] as number[][];
    for (const q of queries) {
      const filter = { holderId: "agent_bench", match: matchExpression(q), limit: 10, offset: 0 };
      const tops: string[][] = [];
      for (const [e, store] of stores.entries()) {
        const t = performance.now();
        tops.push((await store.search("local", filter)).items.map((m) => m.id));
        times[e]?.push(performance.now() - t);
      }
      scores.push(overlapOf(tops[0] ?? [], tops[1] ?? []));
    }
    const [lite, pg] = times.map(median) as [number, number];
    console.log(
      `memory search (${paragraphs.length} memories of one agent, ${queries.length} queries, top 10 with the total):`,
    );
    console.log(`  top-10 overlap of PostgreSQL's with SQLite's  ${mean(scores).toFixed(3)}`);
    console.log(
      `  median search: SQLite ${fmt(lite, 2)} ms; PostgreSQL ${fmt(pg, 2)} ms (${fmt(pg / lite, 1)}×)`,
    );
  } finally {
    for (const t of apps) await t.close();
  }
}
