/**
 * Local search on PostgreSQL finds what it finds on SQLite: the fixture corpus indexed offline into both
 * engines (FTS5's bm25() on one, BM25 in SQL over tsvector on the other), then the same questions asked
 * of both. The entities local search selects (its BM25 match, then the entities the question names) are
 * compared by name: the top-10 overlap is printed and must stay high.
 */
import { afterAll, expect, test } from "bun:test";
import { runIndex } from "../../server/search/indexing/pipeline.ts";
import { buildLocalContext } from "../../server/search/services/local-context.ts";
import { SearchGraphStore } from "../../server/search/stores/graph-store.ts";
import type { SearchStore } from "../../server/search/stores/search-store.ts";
import { fixtureDocuments, searchDb } from "./fixtures.ts";

const QUESTIONS = [
  "Who is Scrooge?",
  "What did Bob Cratchit do at Christmas?",
  "Tell me about Tiny Tim and his crutch",
  "Who was Jacob Marley?",
  "What happened with the pudding?",
  "Who is Fred and what did he ask his uncle?",
  "What did the Ghost of Christmas Present show?",
  "Mrs. Cratchit and the goose",
  "the counting-house and the clerk",
  "Where did Scrooge live in the City?",
];

const sqlite = await searchDb("sqlite");
const postgres = await searchDb("postgres");
afterAll(async () => {
  await sqlite.close();
  await postgres.close();
});

async function topEntities(store: SearchStore, question: string): Promise<string[]> {
  const index = await store.findIndex("local", "carol");
  if (!index) throw new Error("no index");
  const stores = { search: store, graph: new SearchGraphStore(store.db) };
  const context = await buildLocalContext(stores, index, question);
  return context.entities.slice(0, 10).map((e) => e.name);
}

test("the same corpus indexed on both engines selects the same top entities for local search", async () => {
  const built: Awaited<ReturnType<typeof runIndex>>[] = [];
  for (const { store } of [sqlite, postgres])
    built.push(await runIndex(store, "local", "carol", fixtureDocuments()));
  // The index itself is the same graph on both engines.
  const shape = (s: (typeof built)[number]) => [
    s.units,
    s.entities,
    s.relationships,
    s.communities,
    s.reports,
  ];
  expect(shape(built[1] as (typeof built)[number])).toEqual(shape(built[0] as (typeof built)[number]));

  let shared = 0;
  let total = 0;
  for (const question of QUESTIONS) {
    const onSqlite = await topEntities(sqlite.store, question);
    const onPostgres = new Set(await topEntities(postgres.store, question));
    expect(onSqlite.length).toBeGreaterThan(0);
    shared += onSqlite.filter((name) => onPostgres.has(name)).length;
    total += onSqlite.length;
  }
  const overlap = shared / total;
  console.log(
    `local search top-10 entities, PostgreSQL vs SQLite: overlap ${overlap.toFixed(3)} (${shared}/${total})`,
  );
  expect(overlap).toBeGreaterThanOrEqual(0.8);
}, 120_000);
