/**
 * Documents that change without a rebuild (issue 31, item 4), over HTTP and the `index` command on real
 * SQLite: re-sending a changed document re-extracts only its units; DELETE
 * /search/indexes/{index}/documents/{name} takes out its units, the entities and relationships only it
 * supported, and new reports only for the communities it touched (a kept report is the stored one, so a
 * marker written into it survives); citation ids of what survives stay put; an answer about the removed
 * document no longer cites it; bad requests are 404s and 422s that change nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { IndexSummary } from "../../schemas/search.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

type Row = Record<string, string | number | boolean>;
let t: TestApp;

/** A document about its own people and place, each named in several sentences (offline needs two mentions). */
const story = (a: string, b: string, place: string, extra = "") =>
  [
    `${a} worked with ${b} in ${place}.`,
    `Every morning ${a} wrote to ${b} about the work.`,
    `${b} answered ${a} from ${place} the same day.`,
    `In ${place} the two of them, ${a} and ${b}, were known to everyone.`,
    extra,
  ].join("\n\n");
const DOCS = {
  "ada.txt": story("Ada Lovelace", "Charles Babbage", "London"),
  "newton.txt": story("Isaac Newton", "Edmond Halley", "Cambridge"),
  "curie.txt": story("Marie Curie", "Pierre Curie", "Paris"),
};

const index = (documents: Record<string, string>) =>
  t.json<IndexSummary>(
    "/search/index",
    postJson({
      name: "change",
      documents: Object.entries(documents).map(([name, text]) => ({ name, text })),
    }),
  );
const extractionIds = async (title: string) =>
  (
    await t.ctx.database.all<{ id: number }>(
      `SELECT x.id FROM search_extractions x JOIN search_units u ON u.id = x.unit_id
       JOIN search_documents d ON d.id = u.document_id WHERE d.title = ? ORDER BY x.id`,
      [title],
    )
  ).map((r) => r.id);
const entities = () =>
  t.ctx.database.all<{ name: string; human_id: number }>(
    "SELECT name, human_id FROM search_entities ORDER BY name",
  );
const reportTitles = async () =>
  (await t.ctx.database.all<{ title: string }>("SELECT title FROM search_reports ORDER BY title")).map(
    (r) => r.title,
  );

beforeAll(async () => {
  t = await createTestApp();
  const built = await index(DOCS);
  expect(built.status).toBe(200);
  expect(built.body.entities).toBe(9);
});
afterAll(() => t.close());

describe("a changed document", () => {
  test("re-sending one changed document re-extracts its units only", async () => {
    const before = { ada: await extractionIds("ada.txt"), newton: await extractionIds("newton.txt") };
    const changed = {
      ...DOCS,
      "ada.txt": story(
        "Ada Lovelace",
        "Charles Babbage",
        "London",
        "Ada Lovelace met Mary Somerville in London. Mary Somerville wrote back to Ada Lovelace.",
      ),
    };
    const { status, body } = await index(changed);
    expect(status).toBe(200);
    expect(body.documents_indexed).toBe(1);
    expect(body.documents_unchanged).toBe(2);
    expect(await extractionIds("newton.txt")).toEqual(before.newton);
    expect((await extractionIds("ada.txt")).some((id) => before.ada.includes(id))).toBe(false);
    expect((await entities()).map((e) => e.name)).toContain("Mary Somerville");
  });
});

describe("DELETE /search/indexes/{index}/documents/{name}", () => {
  test("lists documents, then removes one: its entities, its ties and its community's report, nothing else", async () => {
    const listed = await t.json<{ documents: Row[] }>("/search/indexes/change/documents");
    expect(listed.status).toBe(200);
    expect(listed.body.documents.map((d) => d.name)).toEqual(["ada.txt", "curie.txt", "newton.txt"]);
    // Mark the stored reports: a community the removal does not touch must keep its stored report.
    await t.ctx.database.run("UPDATE search_reports SET title = 'KEPT ' || title");
    const ids = new Map((await entities()).map((e) => [e.name, e.human_id]));

    const removed = await t.json<IndexSummary>("/search/indexes/change/documents/curie.txt", {
      method: "DELETE",
    });
    expect(removed.status).toBe(200);
    expect(removed.body.documents).toBe(1 + 1);
    expect(removed.body.documents_removed).toBe(1);
    const names = (await entities()).map((e) => e.name);
    for (const gone of ["Marie Curie", "Pierre Curie", "Paris"]) expect(names).not.toContain(gone);
    for (const kept of ["Ada Lovelace", "Isaac Newton", "Cambridge"]) expect(names).toContain(kept);
    // What survives keeps its citation id.
    for (const e of await entities()) expect(e.human_id).toBe(ids.get(e.name) as number);
    const rels = await t.ctx.database.get<{ n: number }>(
      "SELECT count(*) AS n FROM search_relationships WHERE source LIKE '%Curie%' OR target LIKE '%Curie%'",
    );
    expect(rels?.n).toBe(0);
    const titles = await reportTitles();
    expect(titles.length).toBeGreaterThan(0);
    expect(titles.every((title) => title.startsWith("KEPT "))).toBe(true);
    expect(titles.some((title) => title.includes("Curie"))).toBe(false);
  });

  test("an answer about the removed document no longer cites it", async () => {
    const ask = async () =>
      (
        await t.json<{ response: string; context_data: Record<string, Row[]> }>(
          "/search/local",
          postJson({ index: "change", query: "Who did Isaac Newton write to?" }),
        )
      ).body;
    const sourceDocs = async (body: { context_data: Record<string, Row[]> }) => {
      const ids = (body.context_data.sources ?? []).map((s) => Number(s.id));
      return (
        await t.ctx.database.all<{ title: string }>(
          `SELECT DISTINCT d.title FROM search_units u JOIN search_documents d ON d.id = u.document_id WHERE u.id IN (${ids.join(",") || "0"})`,
        )
      ).map((r) => r.title);
    };
    expect(await sourceDocs(await ask())).toContain("newton.txt");
    expect(
      (await t.request("/search/indexes/change/documents/newton.txt", { method: "DELETE" })).status,
    ).toBe(200);
    const after = await ask();
    expect(await sourceDocs(after)).not.toContain("newton.txt");
    expect(after.response).not.toContain("Isaac Newton");
  });

  test("an unknown index or document is a 404 and a bad index name a 422; nothing changes", async () => {
    const before = await entities();
    expect((await t.request("/search/indexes/nope/documents/ada.txt", { method: "DELETE" })).status).toBe(
      404,
    );
    expect((await t.request("/search/indexes/change/documents/nope.txt", { method: "DELETE" })).status).toBe(
      404,
    );
    expect((await t.request("/search/indexes/nope/documents")).status).toBe(404);
    expect((await t.request("/search/indexes/..%2Fx/documents/ada.txt", { method: "DELETE" })).status).toBe(
      422,
    );
    expect(await entities()).toEqual(before);
  });
});
