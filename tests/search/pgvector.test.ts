/**
 * Entity vectors on PostgreSQL. Debian's PostgreSQL has no pgvector, so the vector path runs against
 * PGlite (PostgreSQL compiled to WebAssembly, with its pgvector build) served on a loopback port by
 * pglite-socket and reached through Bun.SQL as any PostgreSQL server is: the extension is found and
 * enabled, an offline index embeds every entity, and `<=>` ranks them as cosine distance computed here
 * does. On the test cluster (no pgvector) the reason is given and search stays on BM25.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import type { EmbeddingsClient } from "../../server/models/embeddings.ts";
import { runIndex } from "../../server/search/indexing/pipeline.ts";
import { searchMigrations } from "../../server/search/migrations/index.ts";
import { SearchGraphStore } from "../../server/search/stores/graph-store.ts";
import { SearchStore } from "../../server/search/stores/search-store.ts";
import { SearchVectorStore } from "../../server/search/stores/vector-store.ts";
import { applyMigrations, fromSqliteSet } from "../../server/storage/db/migrate.ts";
import { openDb } from "../../server/storage/db/open.ts";
import type { Db } from "../../server/storage/db/port.ts";
import { failingWith, rows } from "../helpers/refuse-writes.ts";
import { fixtureDocuments, searchDb } from "./fixtures.ts";

/** A toy semantic space: one dimension per concept, counted from the words that express it. */
const CONCEPTS: string[][] = [
  ["ghost", "spirit", "phantom", "spectre"],
  ["dead", "death", "grave", "coffin", "buried"],
  ["child", "children", "boy", "girl", "son", "daughter"],
  ["money", "rich", "poor", "shillings", "sixpence", "business"],
];
function embed(text: string): Float32Array {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  return new Float32Array([1, ...CONCEPTS.map((c) => words.filter((w) => c.includes(w)).length * 10)]);
}
const client = {
  model: "toy-embed",
  embed: async (texts: string[]) => texts.map(embed),
} as unknown as EmbeddingsClient;

function cosineDistance(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return 1 - dot / Math.sqrt(na * nb);
}

let pglite: PGlite;
let server: PGLiteSocketServer;
let db: Db;
beforeAll(async () => {
  pglite = await PGlite.create({ extensions: { vector } });
  server = new PGLiteSocketServer({ db: pglite, host: "127.0.0.1", port: 0 });
  await server.start();
  // PGlite serves one connection: a pool of one.
  db = openDb({
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    dataDir: "/nonexistent",
    poolSize: 1,
  });
  await applyMigrations(db, [fromSqliteSet({ scope: "search", migrations: searchMigrations })]);
}, 60_000);
afterAll(async () => {
  await db?.close();
  await server?.stop();
  await pglite?.close();
});

test("with pgvector: entities are embedded at index time and ranked by cosine distance with <=>", async () => {
  const store = new SearchStore(db);
  const vectors = new SearchVectorStore(db);
  expect(await vectors.available()).toEqual({ ok: true });
  const summary = await runIndex(store, "local", "carol", fixtureDocuments(), { embeddings: client });
  expect(summary.entities).toBeGreaterThan(10);
  expect(summary.vectors).toBe(summary.entities);
  expect(summary.warnings.filter((w) => w.includes("BM25"))).toEqual([]);
  const index = await store.findIndex("local", "carol");
  if (!index) throw new Error("no index");
  expect(await vectors.count(index, "toy-embed")).toBe(summary.entities);
  expect(await vectors.has(index, "toy-embed")).toBe(true);

  // The ranking pgvector gives is the one cosine distance gives over the same texts.
  const entities = await new SearchGraphStore(db).allEntities(index);
  const query = embed("a ghost of the dead");
  const expected = entities
    .map((e) => ({ id: e.id, distance: cosineDistance(query, embed(`${e.name}: ${e.description}`)) }))
    .sort((a, b) => a.distance - b.distance || a.id - b.id);
  const nearest = await vectors.nearest(index, "toy-embed", query, 5);
  expect(nearest).toHaveLength(5);
  for (const [i, row] of nearest.entries())
    expect(row.distance).toBeCloseTo((expected[i] as { distance: number }).distance, 5);
  expect(nearest[0]?.distance).toBeLessThan((expected.at(-1) as { distance: number }).distance);

  // An unchanged re-index embeds nothing new and keeps every vector.
  let asked = 0;
  const counting = {
    model: "toy-embed",
    embed: async (texts: string[]) => {
      asked += texts.length;
      return texts.map(embed);
    },
  } as unknown as EmbeddingsClient;
  const again = await runIndex(store, "local", "carol", fixtureDocuments(), { embeddings: counting });
  expect(asked).toBe(0);
  expect(again.vectors).toBe(summary.entities);
}, 120_000);

test("without pgvector (the test cluster): the reason is given and the index stays on BM25", async () => {
  const { store, close } = await searchDb("postgres");
  try {
    expect(await new SearchVectorStore(store.db).available()).toEqual({
      ok: false,
      reason: "this PostgreSQL server has no pgvector extension",
    });
    const summary = await runIndex(store, "local", "carol", fixtureDocuments(), { embeddings: client });
    expect(summary.vectors).toBe(0);
    expect(summary.warnings).toContain(
      "this PostgreSQL server has no pgvector extension; local search stays on BM25",
    );
  } finally {
    await close();
  }
}, 120_000);

test("with pgvector: vectors whose entities cannot be updated are not stored (one transaction)", async () => {
  const store = new SearchStore(db);
  const stave = fixtureDocuments().slice(0, 1);
  await failingWith(db, ["search_entities", "UPDATE"], () =>
    runIndex(store, "local", "refused", stave, { embeddings: client }),
  );
  const index = await store.findIndex("local", "refused");
  if (!index) throw new Error("no index");
  expect(await rows(db, "search_vectors", "index_id = ?", [index.id])).toBe(0);
  expect(await rows(db, "search_entities", "index_id = ? AND embed_hash IS NOT NULL", [index.id])).toBe(0);
  const again = await runIndex(store, "local", "refused", stave, { embeddings: client });
  expect(again.vectors).toBeGreaterThan(0);
}, 120_000);
