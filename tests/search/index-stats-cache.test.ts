/**
 * What a query remembers of an index per version (services/index-stats.ts: its unit count, each term's
 * unit count, each document's size, its full-text searches over units, phrases and entities, the types of
 * the names it met) must never outlive a change: a document changed, added or removed (over HTTP, and
 * straight through the store, where no graph rebuild follows to move `updated_at`), a graph written
 * with no unit changed, a different index, another database with the same index ids. Every figure is
 * checked against a fresh read from the store. Runs on both engines (ATRIUM_TEST_DATABASE=postgres).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  documentSizes,
  entityTypes,
  rememberedSearch,
  termCounts,
  unitCount,
} from "../../server/search/services/index-stats.ts";
import { SearchGraphStore } from "../../server/search/stores/graph-store.ts";
import { SearchStore } from "../../server/search/stores/search-store.ts";
import type { IndexRow } from "../../server/search/types.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

let t: TestApp;
let other: TestApp;
let store: SearchStore;

const CAP = 400;
const TERMS = ["lighthouse", "keeper", "harbour"];
const page = (words: string) =>
  `Ada Lovelace wrote to Charles Babbage about ${words}. Charles Babbage answered Ada Lovelace the same day.`;

const send = (app: TestApp, name: string, documents: Record<string, string>) =>
  app.json(
    "/search/index",
    postJson({ name, documents: Object.entries(documents).map(([name, text]) => ({ name, text })) }),
  );
const row = async (s: SearchStore, name: string): Promise<IndexRow> =>
  (await s.db.get<IndexRow>("SELECT * FROM search_indexes WHERE name = ?", [name])) as IndexRow;
const documentIds = async (s: SearchStore, index: IndexRow) =>
  (
    await s.db.all<{ id: number }>("SELECT id FROM search_documents WHERE index_id = ? ORDER BY id", [
      index.id,
    ])
  ).map((r) => r.id);

/** The remembered figures of the index as it is now, and the same counted afresh. */
async function figures(s: SearchStore, name: string) {
  const index = await row(s, name);
  const ids = await documentIds(s, index);
  const g = new SearchGraphStore(s.db);
  const remembered = {
    units: await unitCount(s, index),
    terms: await termCounts(s, index, TERMS, CAP),
    sizes: [...(await documentSizes(s, index, ids)).entries()],
    ...(await searches(s, g, index, true)),
  };
  const counted = {
    units: await s.countUnits(index),
    terms: await s.unitTermCounts(index, TERMS, CAP),
    sizes: [...(await s.documentUnitCounts(index, ids)).entries()],
    ...(await searches(s, g, index, false)),
  };
  expect(remembered).toEqual(counted);
  return remembered;
}

const UNIT_MATCH = TERMS.map((t) => `"${t}"`).join(" OR ");
const PHRASES = ["the lighthouse", "its keeper"];
const ENTITY_MATCH = '"ada" OR "babbage"';
const NAMES = ["Ada Lovelace", "Charles Babbage", "Nobody Here"];

/** The index's searches and name types: remembered (index-stats.ts), or read afresh from the stores. */
async function searches(s: SearchStore, g: SearchGraphStore, index: IndexRow, kept: boolean) {
  const ids = async (table: string) =>
    (
      await s.db.all<{ id: number }>(`SELECT id FROM ${table} WHERE index_id = ? ORDER BY id`, [index.id])
    ).map((r) => r.id);
  const entities = await ids("search_entities");
  const communities = await ids("search_communities");
  const read = <T>(kind: string, match: string, fn: () => Promise<T[]>) =>
    kept ? rememberedSearch(s, index, kind, match, 10, fn) : fn();
  return {
    unitSearch: [...(await read("units", UNIT_MATCH, () => s.searchUnits(index, UNIT_MATCH, 10)))],
    phraseSearch: [
      ...(await read("phrases", PHRASES.join("\u0000"), () => s.phraseUnits(index, PHRASES, 10))),
    ].sort((a, b) => a - b),
    entitySearch: [
      ...(await read("entities", ENTITY_MATCH, () => g.matchEntities(index, ENTITY_MATCH, 10))),
    ].map((e) => e.id),
    types: [...(await (kept ? entityTypes(g, index, NAMES) : g.entityTypes(index, NAMES))).entries()].sort(),
    relationships: [
      ...(await read("relationships", entities.join(","), () =>
        g.relationshipsTouching(index, entities, 10),
      )),
    ].map((r) => [r.id, r.source, r.target]),
    reports: [
      ...(await read("reports", communities.join(","), () => g.reportsForCommunities(index, communities))),
    ]
      .map((r) => [r.community_id, r.content])
      .sort(),
  };
}

beforeAll(async () => {
  t = await createTestApp();
  other = await createTestApp();
  store = new SearchStore(t.ctx.database);
  const built = await send(t, "alpha", {
    "one.txt": page("the lighthouse and its keeper"),
    "two.txt": page("the lighthouse"),
    "three.txt": page("the harbour"),
  });
  expect(built.status).toBe(200);
  expect((await send(t, "beta", { "only.txt": page("the keeper") })).status).toBe(200);
});
afterAll(async () => {
  await t.close();
  await other.close();
});

test("a changed, an added and a removed document are counted anew, never from the earlier version", async () => {
  const first = await figures(store, "alpha");
  expect(first.units).toBe(3);
  expect(first.terms).toEqual([2, 1, 1]);
  // Asked again at the same version: the same figures (now remembered).
  expect(await figures(store, "alpha")).toEqual(first);

  expect((await send(t, "alpha", { "two.txt": page("the harbour and its keeper") })).status).toBe(200);
  expect((await figures(store, "alpha")).terms).toEqual([1, 2, 2]);

  expect((await send(t, "alpha", { "four.txt": page("a lighthouse keeper") })).status).toBe(200);
  const added = await figures(store, "alpha");
  expect(added.units).toBe(4);
  expect(added.terms).toEqual([2, 3, 2]);

  const removed = await t.request("/search/indexes/alpha/documents/one.txt", { method: "DELETE" });
  expect(removed.status).toBe(200);
  const after = await figures(store, "alpha");
  expect(after.units).toBe(3);
  expect(after.terms).toEqual([1, 2, 2]);
  expect(after.sizes).toHaveLength(3);
});

test("documents written or removed through the store move the version by themselves", async () => {
  const index = await row(store, "alpha");
  const before = await figures(store, "alpha");
  // No graph rebuild follows here, so nothing else moves updated_at.
  const [unit] = await store.tx((tx) =>
    tx.insertDocument(index, { title: "raw.txt", hash: "x", chars: 9 }, [
      { text: "The lighthouse keeper kept the lighthouse.", tokens: 8 },
    ]),
  );
  const inserted = await figures(store, "alpha");
  expect(inserted.units).toBe(before.units + 1);
  expect(inserted.terms[0]).toBe((before.terms[0] ?? 0) + 1);
  await store.tx((tx) => tx.deleteDocument(index, unit?.document_id as number));
  expect(await figures(store, "alpha")).toEqual(before);
});

test("two changes in one millisecond, or a clock behind the stored time, still give two versions", async () => {
  const index = await row(store, "alpha");
  await figures(store, "alpha");
  // A stored time ahead of the clock (another instance's, or the same millisecond): the next change
  // must still move it forward, not back to now or to the same value.
  await store.db.run("UPDATE search_indexes SET updated_at = ? WHERE id = ?", [
    "2999-01-01T00:00:00.000Z",
    index.id,
  ]);
  const ahead = await figures(store, "alpha");
  const [unit] = await store.tx((tx) =>
    tx.insertDocument(index, { title: "late.txt", hash: "y", chars: 9 }, [
      { text: "The harbour was quiet.", tokens: 5 },
    ]),
  );
  const moved = (await row(store, "alpha")).updated_at;
  expect(moved > "2999-01-01T00:00:00.000Z" && moved < "2999-01-01T00:00:00.010Z").toBe(true);
  expect((await figures(store, "alpha")).units).toBe(ahead.units + 1);
  await store.tx((tx) => tx.deleteDocument(index, unit?.document_id as number));
  const again = (await row(store, "alpha")).updated_at;
  expect(again > moved && again < "2999-01-01T00:00:00.010Z").toBe(true);
  expect((await figures(store, "alpha")).units).toBe(ahead.units);
});

test("another index, and another database with the same index ids, have their own figures", async () => {
  expect((await send(other, "beta", { "only.txt": page("the lighthouse, the lighthouse") })).status).toBe(
    200,
  );
  const otherStore = new SearchStore(other.ctx.database);
  // The same index id and the same version times as this database's alpha: only the database differs.
  const alphaRow = await row(store, "alpha");
  await other.ctx.database.run("UPDATE search_indexes SET created_at = ?, updated_at = ? WHERE name = ?", [
    alphaRow.created_at,
    alphaRow.updated_at,
    "beta",
  ]);
  for (let round = 0; round < 2; round++) {
    const alpha = await figures(store, "alpha");
    const beta = await figures(store, "beta");
    const elsewhere = await figures(otherStore, "beta");
    expect(elsewhere.units).toBe(1);
    expect(beta.units).toBe(1);
    expect(beta.terms).toEqual([0, 1, 0]);
    expect(elsewhere.terms).toEqual([1, 0, 0]);
    expect(alpha.units).toBeGreaterThan(1);
  }
  const twin = await row(otherStore, "beta");
  expect([twin.id, twin.created_at, twin.updated_at]).toEqual([
    alphaRow.id,
    alphaRow.created_at,
    alphaRow.updated_at,
  ]);
});

test("a graph written with no unit changed moves the version: entity searches and name types are read anew", async () => {
  expect((await send(t, "gamma", { "g.txt": page("the lighthouse") })).status).toBe(200);
  const graph = new SearchGraphStore(t.ctx.database);
  const first = await figures(store, "gamma");
  expect(first.types).toEqual([
    ["Ada Lovelace", "person"],
    ["Charles Babbage", "person"],
  ]);
  expect(first.entitySearch.length).toBeGreaterThan(0);
  const index = await row(store, "gamma");
  const unitIds = (
    await store.db.all<{ id: number }>("SELECT id FROM search_units WHERE index_id = ?", [index.id])
  ).map((r) => r.id);
  // Ada Lovelace alone, retyped; Charles Babbage gone: no unit changes.
  await graph.tx((tx) =>
    tx.replaceGraph(
      index,
      [
        {
          key: "ADA LOVELACE",
          name: "Ada Lovelace",
          type: "organization",
          description: "A society of letter writers.",
          mentions: 1,
          unitIds,
          degree: 0,
        },
      ],
      [],
    ),
  );
  const after = await figures(store, "gamma");
  expect(after.types).toEqual([["Ada Lovelace", "organization"]]);
  expect(after.entitySearch).toHaveLength(1);
  expect(first.relationships.length).toBeGreaterThan(0);
  expect(after.relationships).toEqual([]);
  expect(after.units).toBe(first.units);
  expect((await row(store, "gamma")).updated_at > index.updated_at).toBe(true);
});
