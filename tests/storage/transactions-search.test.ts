/**
 * The search family's indexing transactions (docs/database.md, "Transactions and their tests") through
 * the real pipeline, on the engine of the run (`ATRIUM_TEST_DATABASE=postgres`): removing documents, a
 * document with its units and extractions, the graph's replacement, the communities with their reports,
 * and the entity vectors (SQLite's sqlite-vec here; pgvector's twin in tests/search/pgvector.test.ts).
 * Each is made to fail part-way by the database itself and leaves what was there before. The index
 * stream's progress events are sent between these transactions, each after the one before committed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { EmbeddingsClient } from "../../server/models/embeddings.ts";
import { runIndex } from "../../server/search/indexing/pipeline.ts";
import { SearchGraphStore } from "../../server/search/stores/graph-store.ts";
import type { SearchStore } from "../../server/search/stores/search-store.ts";
import type { IndexRow } from "../../server/search/types.ts";
import { failingWith, rows } from "../helpers/refuse-writes.ts";
import { fixtureDocuments, searchDb } from "../search/fixtures.ts";

let store: SearchStore;
let close: () => Promise<void>;
let index: IndexRow;
const [one, two] = fixtureDocuments() as [{ title: string; text: string }, { title: string; text: string }];

beforeAll(async () => {
  ({ store, close } = await searchDb());
  await runIndex(store, "local", "tx", [one, two]);
  index = (await store.findIndex("local", "tx")) as IndexRow;
}, 60_000);
afterAll(() => close());

/** Everything an index holds, as counts and names: what a failed run must leave as it was. */
async function snapshot() {
  const graph = new SearchGraphStore(store.db);
  const entities = (await graph.allEntities(index)).map((e) => e.name).sort();
  return {
    documents: (await store.listDocuments(index)).map((d) => d.name),
    units: await store.countUnits(index),
    extractions: await rows(store.db, "search_extractions", "index_id = ?", [index.id]),
    ...(await graph.counts(index)),
    entities,
  };
}

const newDocument = (name: string) => ({
  title: name,
  text: `Zebediah ${name} met Hortensia Vane at the Quillfield market. Zebediah ${name} and Hortensia Vane walked to Marrowby together, and Hortensia Vane spoke of Marrowby all evening.`,
});

test("removing documents: one refused delete keeps every document of the run", async () => {
  const before = await snapshot();
  await failingWith(store.db, ["search_documents", "DELETE", `OLD.title = '${two.title}'`], () =>
    runIndex(store, "local", "tx", [], { remove: [one.title, two.title] }),
  );
  expect(await snapshot()).toEqual(before);
});

test("a document with its units and extractions: a refused extraction keeps out the document and its units", async () => {
  const before = await snapshot();
  await failingWith(store.db, ["search_extractions", "INSERT"], () =>
    runIndex(store, "local", "tx", [one, two, newDocument("Alpha")]),
  );
  expect(await snapshot()).toEqual(before);
});

test("the graph's replacement: a refused relationship leaves the previous graph whole", async () => {
  const graph = new SearchGraphStore(store.db);
  const before = await graph.counts(index);
  const names = (await graph.allEntities(index)).map((e) => e.name).sort();
  await failingWith(store.db, ["search_relationships", "INSERT"], () =>
    runIndex(store, "local", "tx", [one, two, newDocument("Beta")]),
  );
  expect(await graph.counts(index)).toEqual(before);
  expect((await graph.allEntities(index)).map((e) => e.name).sort()).toEqual(names);
});

test("communities with their reports: a refused report leaves the previous communities and reports", async () => {
  const graph = new SearchGraphStore(store.db);
  // Row ids too: the transaction deletes the index's communities and inserts them anew.
  const reports = () =>
    store.db.all<{ id: number; content: string }>(
      "SELECT id, community_id, content FROM search_reports WHERE index_id = ? ORDER BY id",
      [index.id],
    );
  const before = { counts: await graph.counts(index), reports: await reports() };
  await failingWith(store.db, ["search_reports", "INSERT"], () =>
    runIndex(store, "local", "tx", [one, two, newDocument("Gamma")]),
  );
  const after = await graph.counts(index);
  // The graph's own transaction committed before the reports' failed: only communities and reports stay.
  expect({ communities: after.communities, reports: after.reports }).toEqual({
    communities: before.counts.communities,
    reports: before.counts.reports,
  });
  expect(await reports()).toEqual(before.reports);
});

test("entity vectors: a refused entity update stores none of the new vectors (SQLite, sqlite-vec)", async () => {
  const lite = await searchDb("sqlite");
  try {
    const client = {
      model: "toy-embed",
      embed: async (texts: string[]) => texts.map((t) => new Float32Array([1, t.length % 7, t.length % 3])),
    } as unknown as EmbeddingsClient;
    await failingWith(lite.store.db, ["search_entities", "UPDATE"], () =>
      runIndex(lite.store, "local", "v", [one], { embeddings: client }),
    );
    const built = (await lite.store.findIndex("local", "v")) as IndexRow;
    expect(await rows(lite.store.db, "search_vectors", "index_id = ?", [built.id])).toBe(0);
    expect(
      await rows(lite.store.db, "search_entities", "index_id = ? AND embed_hash IS NOT NULL", [built.id]),
    ).toBe(0);
    // Once nothing refuses, a run embeds what the failed one could not.
    await runIndex(lite.store, "local", "v", [one], { embeddings: client });
    expect(await rows(lite.store.db, "search_vectors", "index_id = ?", [built.id])).toBeGreaterThan(0);
  } finally {
    await lite.close();
  }
});
