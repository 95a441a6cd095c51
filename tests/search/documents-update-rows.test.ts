/**
 * An incremental run writes only the graph rows that changed (stores/graph-writer.ts): an entity and a
 * relationship the changed document does not touch keep their rows, and the index afterwards holds the
 * same graph as one built from scratch from the same documents (entities, relationships, communities by
 * their members, reports bar their citation ids, entity full-text search), with every entity's communities ones that exist.
 * Real SQLite, or PostgreSQL with ATRIUM_TEST_DATABASE=postgres.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";

let t: TestApp;

const story = (a: string, b: string, place: string, extra = "") =>
  [
    `${a} worked with ${b} in ${place}.`,
    `Every morning ${a} wrote to ${b} about the work.`,
    `${b} answered ${a} from ${place} the same day.`,
    `In ${place} the two of them, ${a} and ${b}, were known to everyone.`,
    extra,
  ].join("\n\n");
const BEFORE = {
  "ada.txt": story("Ada Lovelace", "Charles Babbage", "London"),
  "newton.txt": story("Isaac Newton", "Edmond Halley", "Cambridge"),
  "curie.txt": story("Marie Curie", "Pierre Curie", "Paris"),
};
const AFTER = {
  ...BEFORE,
  "ada.txt": story(
    "Ada Lovelace",
    "Charles Babbage",
    "London",
    "Ada Lovelace met Mary Somerville in London. Mary Somerville wrote back to Ada Lovelace.",
  ),
};

const build = async (name: string, documents: Record<string, string>) => {
  const { status } = await t.request(
    "/search/index",
    postJson({ name, documents: Object.entries(documents).map(([n, text]) => ({ name: n, text })) }),
  );
  expect(status).toBe(200);
};
const indexId = async (name: string) =>
  (
    (await t.ctx.database.get<{ id: number }>("SELECT id FROM search_indexes WHERE name = ?", [name])) as {
      id: number;
    }
  ).id;
const rows = async (name: string) => {
  const id = await indexId(name);
  const entities = await t.ctx.database.all<{ id: number; name: string; community_ids: string }>(
    "SELECT id, name, type, description, degree, mentions, community_ids FROM search_entities WHERE index_id = ? ORDER BY name",
    [id],
  );
  const relationships = await t.ctx.database.all<{ id: number; source: string; target: string }>(
    "SELECT id, source, target, description, weight, rank FROM search_relationships WHERE index_id = ? ORDER BY source, target",
    [id],
  );
  const communities = await t.ctx.database.all<{ id: number; level: number; entity_ids: string }>(
    "SELECT id, level, entity_ids FROM search_communities WHERE index_id = ?",
    [id],
  );
  const reports = await t.ctx.database.all<{ content: string }>(
    "SELECT content FROM search_reports WHERE index_id = ? ORDER BY content",
    [id],
  );
  return { entities, relationships, communities, reports };
};

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("an update keeps the rows it did not change and leaves the graph a rebuild would", async () => {
  await build("changing", BEFORE);
  const before = await rows("changing");
  await build("changing", AFTER);
  await build("scratch", AFTER);
  const after = await rows("changing");
  const scratch = await rows("scratch");

  // Newton's document did not change: his entity and his tie to Halley keep their rows.
  const entityId = (r: typeof before, name: string) => r.entities.find((e) => e.name === name)?.id;
  expect(entityId(after, "Isaac Newton")).toBe(entityId(before, "Isaac Newton") as number);
  const tie = (r: typeof before) =>
    r.relationships.find((x) => [x.source, x.target].sort().join() === "Edmond Halley,Isaac Newton")?.id;
  expect(tie(after)).toBe(tie(before) as number);
  // Ada's changed: her row is new.
  expect(entityId(after, "Ada Lovelace")).not.toBe(entityId(before, "Ada Lovelace") as number);

  // The same graph as a build from scratch, row ids aside.
  const names = (r: typeof before) => new Map(r.entities.map((e) => [e.id, e.name]));
  const content = (r: typeof before) => ({
    entities: r.entities.map(({ id: _id, community_ids: _c, ...e }) => e),
    relationships: r.relationships.map(({ id: _id, ...x }) => x),
    communities: r.communities
      .map(
        (c) =>
          `${c.level}:${(JSON.parse(c.entity_ids) as number[])
            .map((i) => names(r).get(i))
            .sort()
            .join("|")}`,
      )
      .sort(),
    // Citation ids stay put across runs, so a report cites by the ids its index has: compared without.
    reports: r.reports.map((x) => x.content.replace(/\[Data: [^\]]*\]/g, "[Data]")).sort(),
  });
  expect(content(after)).toEqual(content(scratch));
  expect(after.entities.map((e) => e.name)).toContain("Mary Somerville");

  // Every entity names only communities that exist, and is in those that list it.
  const existing = new Map(after.communities.map((c) => [c.id, JSON.parse(c.entity_ids) as number[]]));
  for (const e of after.entities) {
    const listed = [...existing].filter(([, members]) => members.includes(e.id)).map(([id]) => id);
    expect((JSON.parse(e.community_ids) as number[]).sort()).toEqual(listed.sort());
  }

  // Entity full-text search finds kept and new entities, and nothing of a replaced row twice.
  const ask = async (index: string) =>
    (
      await t.json<{ context_data: { entities?: { entity: string }[] } }>(
        "/search/local",
        postJson({ index, query: "Who did Isaac Newton and Mary Somerville write to?" }),
      )
    ).body.context_data.entities?.map((e) => e.entity);
  const found = await ask("changing");
  expect(found).toEqual(await ask("scratch"));
  expect(found).toContain("Isaac Newton");
  expect(found).toContain("Mary Somerville");
});
