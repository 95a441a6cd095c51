/**
 * Round trips of a local search (issue 27, item 7): each statement is one on PostgreSQL, so the request
 * path reads nothing twice. The index's unit count is read once per index version (services/index-stats.ts
 * remembers it, with each term's unit count, each document's size, the full-text searches, the
 * relationships and reports read and the names' types), the question's term frequencies
 * in one statement for the terms not yet counted, and no later step counts the units again. Runs on both
 * engines.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { countStatements } from "../helpers/count-statements.ts";
import { fixtureDocuments } from "./fixtures.ts";

let t: TestApp;
let counter: { count: number; sql?: string[] };

beforeAll(async () => {
  t = await createTestApp();
  const documents = fixtureDocuments().map((d) => ({ name: d.title, text: d.text }));
  expect((await t.request("/search/index", postJson({ documents }))).status).toBe(200);
  counter = countStatements(t.ctx.database);
});
afterAll(() => t.close());

async function localSearch(query: string): Promise<{ sql: string[]; body: { response: string } }> {
  counter.sql = [];
  const res = await t.json<{ response: string }>("/search/local", postJson({ query }));
  expect(res.status).toBe(200);
  const sql = counter.sql;
  counter.sql = undefined;
  return { sql, body: res.body };
}

test("a local search counts the index's units once per index version, a repeated question not at all", async () => {
  const query = "Who is Scrooge and what does he fear?";
  const first = await localSearch(query);
  expect(first.body.response.length).toBeGreaterThan(0);
  const unitCounts = (sql: string[]) =>
    sql.filter((s) => s.startsWith("SELECT count(*) AS n FROM search_units WHERE"));
  const termCounts = (sql: string[]) =>
    sql.filter((s) => /count\(\*\) FROM \(SELECT 1 FROM search_units_fts/.test(s));
  expect(first.sql[0]).toContain("FROM search_indexes");
  expect(first.sql.filter((s) => s.includes("FROM search_indexes"))).toHaveLength(1);
  expect(unitCounts(first.sql)).toHaveLength(1);
  expect(termCounts(first.sql)).toHaveLength(1);
  // The same index version: its unit count, the terms' counts and the documents' sizes are known.
  const again = await localSearch(query);
  expect(again.body.response).toBe(first.body.response);
  expect(unitCounts(again.sql)).toEqual([]);
  expect(termCounts(again.sql)).toEqual([]);
  expect(again.sql.filter((s) => /FROM search_units WHERE document_id IN/.test(s))).toEqual([]);
  // Its searches, relationships, reports and name types are known too: the index row, the selected
  // entities and the pool's units are all it reads (11 statements the first time).
  expect(first.sql).toHaveLength(11);
  expect(again.sql.map((s) => s.match(/FROM (\w+)/)?.[1])).toEqual([
    "search_indexes",
    "search_entities",
    "search_units",
  ]);
});

test("the question's term frequencies are one statement, however many words it has", async () => {
  const { sql } = await localSearch("Scrooge Marley ghost Christmas chains counting house fear");
  const termCounts = sql.filter((s) => /count\(\*\) FROM \(SELECT 1 FROM search_units_fts/.test(s));
  expect(termCounts).toHaveLength(1);
});

test("an index without units answers that there is nothing to search", async () => {
  const { body } = await t.json<{ response: string }>(
    "/search/local",
    postJson({ query: "Scrooge", index: "never-built" }),
  );
  expect(body.response).toContain("No search index named 'never-built' has been built yet");
});
