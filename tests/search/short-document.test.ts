/**
 * Entities from one short document (issue 31, item 3), over HTTP and offline: the docs' own example, one
 * line with two full names and a known place, gives both people, the place and their relationships; a
 * document too small to make a graph says so in the build summary's warnings instead of 0 entities
 * silently; and a book's one-off capitalised sentence starts still make no entities.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { IndexSummary } from "../../schemas/search.ts";
import { extractOffline, profileDocument } from "../../server/search/indexing/extract-offline.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { fixtureText } from "./fixtures.ts";

type Row = Record<string, string | number>;
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const build = async (name: string, text: string) => {
  const { status, body } = await t.json<IndexSummary>(
    "/search/index",
    postJson({ name, documents: [{ name: "note.txt", text }] }),
  );
  expect(status).toBe(200);
  return body;
};

describe("a one-line note", () => {
  test("the docs' example gives both people, London and their relationships", async () => {
    const summary = await build("notes", "Ada Lovelace worked with Charles Babbage in London.");
    expect(summary.entities).toBe(3);
    expect(summary.relationships).toBe(3);
    expect(summary.warnings).toEqual([]);
    const { body } = await t.json<{ context_data: Record<string, Row[]> }>(
      "/search/local",
      postJson({ index: "notes", query: "Who did Ada Lovelace work with?" }),
    );
    const entities = Object.fromEntries((body.context_data.entities ?? []).map((e) => [e.entity, e]));
    expect(Object.keys(entities).sort()).toEqual(["Ada Lovelace", "Charles Babbage", "London"]);
    const pairs = (body.context_data.relationships ?? []).map((r) => [r.source, r.target].sort().join(" + "));
    expect(pairs).toContain("Ada Lovelace + Charles Babbage");
    expect(pairs).toContain("Ada Lovelace + London");
  });

  test("a note with no names says there is too little to build a graph", async () => {
    const summary = await build("plain", "buy milk and eggs before the shop closes.");
    expect(summary.entities).toBe(0);
    expect(summary.warnings.join("\n")).toMatch(
      /too little to build a graph from: no entities in \d+ tokens/,
    );
  });

  test("a sentence-opening word is no name in a note ('When Ada…'), nor in a long book", () => {
    const note = "When Ada Lovelace met Charles Babbage, Yesterday was cold.";
    const names = extractOffline(note, profileDocument(note)).entities.map((e) => e.name);
    expect(names.sort()).toEqual(["Ada Lovelace", "Charles Babbage"]);
    // In a book a capitalised word seen only at sentence starts stays out of names, as before.
    const stave = fixtureText("stave-one.txt");
    const found = extractOffline(stave, profileDocument(stave)).entities.map((e) => e.name);
    for (const word of ["Oh", "Nay", "External"])
      expect(found.some((n) => n.split(" ")[0] === word)).toBe(false);
  });
});
