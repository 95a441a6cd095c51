/**
 * PostgreSQL text search ranked like FTS5 (server/storage/db/text-search.ts), against FTS5's own bm25()
 * on the same small corpus; bench/text-search.ts measures the agreement on whole books.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Db } from "../../server/storage/db/port.ts";
import { openPostgres } from "../../server/storage/db/postgres.ts";
import { bm25Query, TEXT_SEARCH_SETUP, textSearchValues } from "../../server/storage/db/text-search.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";

const DOCS: [string, string][] = [
  ["ann", "The ship sailed from the harbour at dawn and the crew sang."],
  ["ann", "The lighthouse keeper watched the ship, the sea and the sky."],
  ["ann", "A well-known captain was running the ship; the captain runs every ship he boards."],
  ["ann", "The sea, the sea, the sea: the sea was all the old sailor could talk about."],
  ["ann", "Cranberries grow in the bogs behind the dunes of the cape."],
  ["bob", "The captain of the other ship was a cranberry merchant."],
];

let db: Db;
const lite = new Database(":memory:");

beforeAll(async () => {
  db = openPostgres(await freshPostgresDatabase());
  await db.exec(TEXT_SEARCH_SETUP);
  await db.exec(
    "CREATE TABLE docs (id INTEGER PRIMARY KEY, owner_id TEXT NOT NULL, body TEXT NOT NULL, tsv tsvector NOT NULL, len INTEGER NOT NULL)",
  );
  await db.exec("CREATE INDEX docs_tsv ON docs USING gin (tsv)");
  lite.exec("CREATE VIRTUAL TABLE docs USING fts5 (body, owner_id UNINDEXED, tokenize = 'porter unicode61')");
  for (const [i, [owner, body]] of DOCS.entries()) {
    await db.run(`INSERT INTO docs (id, owner_id, body, tsv, len) SELECT ?, ?, ?, ${textSearchValues("?")}`, [
      i + 1,
      owner,
      body,
      body,
    ]);
    lite.prepare("INSERT INTO docs (rowid, body, owner_id) VALUES (?, ?, ?)").run(i + 1, body, owner);
  }
});
afterAll(async () => {
  await db.close();
  lite.close();
});

const search = (q: string, owner: string) =>
  db.all<{ id: number; score: number }>(
    bm25Query({ table: "docs", columns: "t.id", where: "t.owner_id = ?", limit: 10 }),
    [q, owner, owner, owner, owner],
  );
const fts5 = (q: string, owner: string) =>
  (
    lite.prepare("SELECT rowid AS id FROM docs WHERE docs MATCH ? AND owner_id = ? ORDER BY bm25(docs)").all(
      q
        .toLowerCase()
        .match(/[a-z0-9]+/g)
        ?.map((w) => `"${w}"`)
        .join(" OR ") ?? "",
      owner,
    ) as { id: number }[]
  ).map((r) => r.id);

test("ranks as FTS5's bm25() does: rare terms weigh more, repeated terms saturate, longer documents weigh less", async () => {
  for (const q of ["ship sea", "the captain", "sea sky lighthouse", "cranberries dunes", "the ship"]) {
    expect((await search(q, "ann")).map((r) => r.id)).toEqual(fts5(q, "ann"));
  }
  const scores = await search("the lighthouse", "ann");
  expect(scores[0]?.id).toBe(2);
  expect(scores.every((r) => typeof r.score === "number")).toBe(true);
});

test("tokenised like porter unicode61: stems, no stopwords dropped, hyphenated words split", async () => {
  expect((await search("runs", "ann")).map((r) => r.id)).toEqual([3]);
  expect((await search("known", "ann")).map((r) => r.id)).toEqual([3]);
  expect((await search("cranberry", "ann")).map((r) => r.id)).toEqual([5]);
  // "the" alone is in every document: it still matches (FTS5 keeps stopwords), scored near zero.
  expect((await search("the", "ann")).length).toBe(5);
});

test("the scope condition keeps other owners' documents out, statistics included", async () => {
  expect((await search("cranberry merchant", "bob")).map((r) => r.id)).toEqual([6]);
  expect((await search("merchant", "ann")).map((r) => r.id)).toEqual([]);
});
