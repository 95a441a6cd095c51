/**
 * The indexing pipeline on a slice of A Christmas Carol, offline: units, extraction, merge, communities,
 * reports, FTS, incremental runs; on SQLite, or on PostgreSQL with ATRIUM_TEST_DATABASE=postgres.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { IndexSummary } from "../../schemas/search.ts";
import { hierarchicalCommunities } from "../../server/search/indexing/communities.ts";
import { decodeText } from "../../server/search/indexing/documents.ts";
import { mergeGraph } from "../../server/search/indexing/merge.ts";
import { runIndex } from "../../server/search/indexing/pipeline.ts";
import { countTokens, splitUnits } from "../../server/search/indexing/units.ts";
import { SearchGraphStore as GraphStore } from "../../server/search/stores/graph-store.ts";
import { fixtureDocuments, fixtureText, searchDb } from "./fixtures.ts";

const { store, close } = await searchDb();
const db = store.db;
const graph = new GraphStore(store.db);
afterAll(() => close());

let first: IndexSummary;
const phases = new Set<string>();

describe("indexing the fixture corpus offline", () => {
  test("builds units, a graph, communities and reports", async () => {
    first = await runIndex(store, "local", "default", fixtureDocuments(), {
      onProgress: (phase) => phases.add(phase),
    });
    expect(first.documents).toBe(2);
    expect(first.documents_indexed).toBe(2);
    expect(first.units).toBeGreaterThan(10);
    expect(first.entities).toBeGreaterThan(15);
    expect(first.relationships).toBeGreaterThan(20);
    expect(first.communities).toBeGreaterThan(2);
    expect(first.reports).toBe(first.communities);
    expect([...phases].sort()).toEqual(["communities", "extraction", "reports", "units"]);
  });

  test("finds the named characters and things with their types and descriptions", async () => {
    const index = await store.findIndex("local", "default");
    if (!index) throw new Error("no index");
    const entities = new Map((await graph.allEntities(index)).map((e) => [e.name, e]));
    for (const name of ["Scrooge", "Jacob Marley", "Bob Cratchit", "Tiny Tim", "Mrs. Cratchit", "Fred"]) {
      expect({ name, type: entities.get(name)?.type }).toEqual({ name, type: "person" });
    }
    // Not only people: "Parliament" (said twice) is an organisation. The slice says each place once ("The
    // City clocks", "the City of London"), and offline a name said once is no entity: answers.test.ts
    // types places on a text of its own ("head words and cues type what a name names").
    expect(entities.get("Parliament")?.type).toBe("organization");
    expect(entities.get("Tiny Tim")?.description).toContain("Tiny Tim");
    // Ordinary words capitalised at a sentence start are not names.
    for (const word of ["Good", "Old", "Illustration"]) expect(entities.has(word)).toBe(false);
    // Co-occurrence: Bob Cratchit and Tiny Tim share sentences, weighted by how many.
    const tie = (await graph.allRelationships(index)).find(
      (r) => [r.source, r.target].sort().join("|") === "Bob Cratchit|Tiny Tim",
    );
    expect(tie?.weight).toBeGreaterThanOrEqual(1);
    expect(tie?.description).toMatch(/Bob|Tim/);
  });

  test("communities partition the graph at every level, with positive modularity reported", async () => {
    const index = await store.findIndex("local", "default");
    if (!index) throw new Error("no index");
    const communities = await graph.communities(index);
    const connected = new Set(
      (await graph.allRelationships(index)).flatMap((r) => [r.source_id, r.target_id]),
    );
    const top = communities.filter((c) => c.level === 0).flatMap((c) => JSON.parse(c.entity_ids) as number[]);
    expect(new Set(top).size).toBe(top.length); // disjoint
    expect(new Set(top)).toEqual(connected); // covering every entity that has a relationship
    for (const parent of communities) {
      const children = communities.filter((c) => c.parent_id === parent.id);
      if (children.length === 0) continue;
      const members = children.flatMap((c) => JSON.parse(c.entity_ids) as number[]).sort((a, b) => a - b);
      expect(members).toEqual((JSON.parse(parent.entity_ids) as number[]).sort((a, b) => a - b));
    }
    expect(first.levels).toBeGreaterThanOrEqual(1);
    expect(first.modularity.length).toBe(first.levels);
    expect(first.modularity[0]).toBeGreaterThan(0);
    expect(JSON.parse(index.stats).modularity).toEqual(first.modularity);
  });

  test("reports follow GraphRAG's shape and are searchable with full-text search", async () => {
    const index = await store.findIndex("local", "default");
    if (!index) throw new Error("no index");
    const reports = await graph.reportsAtLevel(index, 0);
    expect(reports.length).toBeGreaterThan(0);
    for (const r of reports) {
      expect(r.title.length).toBeGreaterThan(0);
      expect(r.rating).toBeGreaterThanOrEqual(0);
      expect(JSON.parse(r.findings).length).toBeGreaterThan(0);
    }
    const hits = await graph.matchReports(index, '"cratchit"', 0, 5);
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]?.content.toLowerCase()).toContain("cratchit");
    expect((await graph.matchEntities(index, '"marley"', 3)).length).toBeGreaterThan(0);
    expect((await store.searchUnits(index, '"pudding"', 3)).length).toBeGreaterThan(0);
  });

  test("re-indexing unchanged documents does no work", async () => {
    const index = await store.findIndex("local", "default");
    if (!index) throw new Error("no index");
    const maxIds = () =>
      db.get(
        "SELECT max(id) AS unit, (SELECT max(id) FROM search_extractions) AS extraction FROM search_units",
      );
    const before = await maxIds();
    const updatedAt = index.updated_at;
    const progress: string[] = [];
    const again = await runIndex(store, "local", "default", fixtureDocuments(), {
      onProgress: (p, d, t) => progress.push(`${p}:${d}/${t}`),
    });
    expect(again.documents_indexed).toBe(0);
    expect(again.documents_unchanged).toBe(2);
    expect(again.entities).toBe(first.entities);
    expect(progress).not.toContain("communities:1/1");
    expect(await maxIds()).toEqual(before);
    expect((await store.findIndex("local", "default"))?.updated_at).toBe(updatedAt);
  });

  test("a changed document replaces its units; the other keeps its own", async () => {
    const index = await store.findIndex("local", "default");
    if (!index) throw new Error("no index");
    const unitsOf = async (title: string) =>
      (
        await db.all<{ id: number }>(
          "SELECT u.id FROM search_units u JOIN search_documents d ON d.id = u.document_id WHERE d.title = ? ORDER BY u.id",
          [title],
        )
      ).map((r) => r.id);
    const keptBefore = await unitsOf("stave-three.txt");
    const oldUnits = await unitsOf("stave-one.txt");
    const docs = fixtureDocuments();
    docs[0] = {
      title: "stave-one.txt",
      text: `${fixtureText("stave-one.txt")}\n\nEbenezer Scrooge met Ada Lovelace in London. Ada Lovelace laughed.`,
    };
    const run = await runIndex(store, "local", "default", docs);
    expect(run.documents_indexed).toBe(1);
    expect(run.documents_unchanged).toBe(1);
    expect(await unitsOf("stave-three.txt")).toEqual(keptBefore);
    const newUnits = await unitsOf("stave-one.txt");
    expect(newUnits.some((id) => oldUnits.includes(id))).toBe(false);
    expect(
      await db.get(
        `SELECT count(*) AS n FROM search_extractions WHERE unit_id IN (${oldUnits.map(() => "?").join(",")})`,
        oldUnits,
      ),
    ).toEqual({ n: 0 });
    expect((await graph.allEntities(index)).map((e) => e.name)).toContain("Ada Lovelace");
  });

  test("binary or empty documents are skipped with a warning", async () => {
    const run = await runIndex(store, "local", "other", [
      { title: "blob.bin", text: "abc\u0000def" },
      { title: "empty.txt", text: "   " },
    ]);
    expect(run.documents).toBe(0);
    expect(run.warnings).toEqual([
      "blob.bin: skipped, binary content (NUL bytes)",
      "empty.txt: skipped, empty",
    ]);
    // A byte-order mark says UTF-16, and a half character is no UTF-16; bytes neither UTF-8 nor
    // Windows-1252 text (an undefined byte, a control character) are no text.
    expect(decodeText(new Uint8Array([0xff, 0xfe, 0x41]))).toEqual({ reason: "not valid UTF-16 text" });
    expect(decodeText(new Uint8Array([0x41, 0x81, 0x42]))).toEqual({
      reason: "not valid UTF-8 or Windows-1252 text",
    });
    expect(decodeText(new Uint8Array([0x41, 0xe9, 0x1b]))).toEqual({
      reason: "not valid UTF-8 or Windows-1252 text",
    });
    // UTF-8 is read first, its byte-order mark dropped; control characters in UTF-8 stay as they were.
    expect(decodeText(new Uint8Array([0xef, 0xbb, 0xbf, 0x63, 0xc3, 0xa9, 0x1b]))).toEqual({
      text: "cé\u001b",
    });
    expect(decodeText(new Uint8Array([0xfe, 0xff, 0x00, 0xe9]))).toEqual({ text: "é" });
  });

  test("indexes are per owner", async () => {
    expect(await store.findIndex("someone-else", "default")).toBeUndefined();
    expect((await store.listIndexes("local")).map((i) => i.name)).toEqual(["default", "other"]);
  });
});

describe("pipeline pieces", () => {
  test("units are token-sized with overlap", () => {
    const text = fixtureText("stave-one.txt");
    const units = splitUnits(text, { size: 300, overlap: 50 });
    expect(units.length).toBeGreaterThan(text.length / 4 / 300);
    for (const unit of units) expect(unit.tokens).toBeLessThanOrEqual(300);
    // Consecutive units share text (the overlap).
    const tail = (units[0]?.text ?? "").slice(-60);
    expect(units[1]?.text).toContain(tail.slice(-30));
    expect(countTokens(units[0]?.text ?? "")).toBeLessThanOrEqual(300);
  });

  test("merge joins names case-insensitively and 'Mr. X' into X, summing weights", () => {
    const merged = mergeGraph([
      {
        unit_id: 1,
        kind: "entity",
        name: "Scrooge",
        target: null,
        type: "person",
        description: "A miser.",
        weight: 1,
      },
      {
        unit_id: 2,
        kind: "entity",
        name: "SCROOGE",
        target: null,
        type: "person",
        description: "A miser.",
        weight: 1,
      },
      {
        unit_id: 2,
        kind: "entity",
        name: "Mr. Scrooge",
        target: null,
        type: "person",
        description: "Sir.",
        weight: 1,
      },
      {
        unit_id: 2,
        kind: "entity",
        name: "Marley",
        target: null,
        type: "person",
        description: "Dead.",
        weight: 1,
      },
      {
        unit_id: 1,
        kind: "relationship",
        name: "Scrooge",
        target: "Marley",
        type: null,
        description: "Partners.",
        weight: 2,
      },
      {
        unit_id: 2,
        kind: "relationship",
        name: "MARLEY",
        target: "Mr. Scrooge",
        type: null,
        description: "Partners.",
        weight: 3,
      },
    ]);
    expect(merged.entities.map((e) => [e.key, e.mentions, e.unitIds])).toEqual([
      ["MARLEY", 1, [2]],
      ["SCROOGE", 3, [1, 2]],
    ]);
    expect(merged.entities[1]?.description).toBe("A miser. Sir.");
    expect(merged.relationships).toHaveLength(1);
    expect(merged.relationships[0]?.weight).toBe(5);
  });

  test("hierarchical communities split clusters above the maximum size", async () => {
    // Two dense cliques of 8 joined by one edge: with max size 5 each must split again.
    const edges = [];
    for (const base of [0, 100])
      for (let i = 0; i < 8; i++)
        for (let j = i + 1; j < 8; j++)
          edges.push({ source: base + i, target: base + j, weight: j - i === 1 ? 5 : 1 });
    edges.push({ source: 0, target: 100, weight: 1 });
    const h = await hierarchicalCommunities(edges, 5);
    expect(h.communities.filter((c) => c.level === 0).length).toBe(2);
    expect(h.levels).toBeGreaterThan(1);
    for (const c of h.communities.filter((x) => x.level === 1)) expect(c.parent).not.toBeNull();
    expect(h.modularity[0]).toBeGreaterThan(0.3);
  });
});
