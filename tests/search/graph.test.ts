/**
 * The graph view's routes (issue 31, item 5) over HTTP on real SQLite: GET /search/indexes/{index}/graph
 * answers the index's entities as columns (ids, names, degree, community, positions) and the relationships
 * among them by position; a limit keeps the most connected and says what it left out; one entity's
 * details name its description, the passages that mention it and its neighbours; another user's index is
 * a 404 like an unknown one, and bad parameters are 422s in the family's envelope.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { GraphEntity, IndexGraph } from "../../schemas/search.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

type Graph = typeof IndexGraph.static;
type Entity = typeof GraphEntity.static;
let t: TestApp;

const story = (a: string, b: string, place: string) =>
  [
    `${a} worked with ${b} in ${place}.`,
    `Every morning ${a} wrote to ${b} about the work.`,
    `${b} answered ${a} from ${place} the same day.`,
  ].join("\n\n");
const documents = [
  { name: "ada.txt", text: story("Ada Lovelace", "Charles Babbage", "London") },
  { name: "curie.txt", text: story("Marie Curie", "Pierre Curie", "Paris") },
];

beforeAll(async () => {
  t = await createTestApp();
  expect((await t.request("/search/index", postJson({ name: "people", documents }))).status).toBe(200);
});
afterAll(async () => {
  await t?.close();
});

describe("GET /search/indexes/{index}/graph", () => {
  test("every entity with its place, community and degree; edges join positions", async () => {
    const { status, body } = await t.json<Graph>("/search/indexes/people/graph");
    expect(status).toBe(200);
    const stored = await t.ctx.database.all<{ human_id: number; name: string; degree: number }>(
      "SELECT human_id, name, degree FROM search_entities",
    );
    expect(body.entities).toBe(stored.length);
    expect(body.note).toBeUndefined();
    expect([...body.nodes.name].sort()).toEqual(stored.map((e) => e.name).sort());
    const n = body.nodes.id.length;
    for (const column of [
      body.nodes.name,
      body.nodes.degree,
      body.nodes.community,
      body.nodes.x,
      body.nodes.y,
    ])
      expect(column.length).toBe(n);
    // Most connected first, each with its stored degree and citation id.
    const byName = new Map(stored.map((e) => [e.name, e]));
    body.nodes.name.forEach((name, i) => {
      expect(body.nodes.degree[i]).toBe(byName.get(name)?.degree as number);
      expect(body.nodes.id[i]).toBe(byName.get(name)?.human_id as number);
    });
    expect(body.nodes.degree).toEqual([...body.nodes.degree].sort((a, b) => b - a));
    // Ada's and Marie's worlds share nothing: two communities, and no edge between them.
    const at = (name: string) => body.nodes.name.indexOf(name);
    const community = (name: string) => body.nodes.community[at(name)];
    expect(community("Ada Lovelace")).toBe(community("Charles Babbage") as number);
    expect(community("Ada Lovelace")).not.toBe(community("Marie Curie") as number);
    expect(body.edges.source.length).toBe(body.relationships);
    const pairs = body.edges.source.map((s, i) =>
      [body.nodes.name[s], body.nodes.name[body.edges.target[i] as number]].sort().join(" — "),
    );
    expect(pairs).toContain("Ada Lovelace — Charles Babbage");
    // Positions spread the entities out (circle packing): no two share a point.
    const points = new Set(body.nodes.x.map((x, i) => `${x},${body.nodes.y[i]}`));
    expect(points.size).toBe(n);
  });

  test("a limit keeps the most connected entities and says what it left out", async () => {
    const { status, body } = await t.json<Graph>("/search/indexes/people/graph?limit=2");
    expect(status).toBe(200);
    expect(body.nodes.id.length).toBe(2);
    expect(body.note).toContain(`Showing the 2 most connected of ${body.entities} entities`);
    for (const end of [...body.edges.source, ...body.edges.target]) expect(end).toBeLessThan(2);
  });

  test("unknown index 404; bad names and limits 422, in the family's envelope", async () => {
    const missing = await t.json<{ detail: string }>("/search/indexes/nope/graph");
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toBe("No index 'nope'");
    for (const path of [
      "/search/indexes/people/graph?limit=0",
      "/search/indexes/people/graph?limit=abc",
      "/search/indexes/people/graph?limit=1.5",
      "/search/indexes/people/graph?limit=20001",
      "/search/indexes/bad%20name/graph",
      "/search/indexes/people/graph/entities/x",
      "/search/indexes/people/graph/entities/-1",
    ]) {
      const res = await t.json<{ detail: { loc: string[] }[] }>(path);
      expect({ path, status: res.status }).toEqual({ path, status: 422 });
      expect(Array.isArray(res.body.detail)).toBe(true);
    }
  });
});

describe("GET /search/indexes/{index}/graph/entities/{id}", () => {
  test("an entity's description, the passages that mention it, its neighbours", async () => {
    const graph = (await t.json<Graph>("/search/indexes/people/graph")).body;
    const id = graph.nodes.id[graph.nodes.name.indexOf("Ada Lovelace")] as number;
    const { status, body } = await t.json<Entity>(`/search/indexes/people/graph/entities/${id}`);
    expect(status).toBe(200);
    expect(body.name).toBe("Ada Lovelace");
    expect(body.description).toContain("Ada Lovelace");
    expect(body.sources.length).toBeGreaterThan(0);
    expect(body.sources[0]?.document).toBe("ada.txt");
    expect(body.sources[0]?.text).toContain("Ada Lovelace worked with Charles Babbage");
    expect(body.related.map((r) => r.name)).toContain("Charles Babbage");
    const unknown = await t.json<{ detail: string }>("/search/indexes/people/graph/entities/9999");
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe("Index 'people' has no entity 9999");
  });
});

describe("owner scoping", () => {
  test("another user's index is a 404, its entities too; no identity is a 401", async () => {
    const p = await createTestApp(twoUsers());
    try {
      await p.ctx.database.run(
        "INSERT INTO users (id, display_name) VALUES ('alice', 'Alice'), ('bob', 'Bob')",
      );
      const built = await p.request("/search/index", postJson({ name: "mine", documents }, asUser("alice")));
      expect(built.status).toBe(200);
      const alice = await p.json<Graph>("/search/indexes/mine/graph", { headers: asUser("alice") });
      expect(alice.status).toBe(200);
      expect(alice.body.nodes.id.length).toBeGreaterThan(0);
      const bob = await p.json<{ detail: string }>("/search/indexes/mine/graph", { headers: asUser("bob") });
      expect(bob.status).toBe(404);
      expect(bob.body.detail).toBe("No index 'mine'");
      const entity = `/search/indexes/mine/graph/entities/${alice.body.nodes.id[0]}`;
      expect((await p.request(entity, { headers: asUser("alice") })).status).toBe(200);
      expect((await p.request(entity, { headers: asUser("bob") })).status).toBe(404);
      expect((await p.request("/search/indexes/mine/graph")).status).toBe(401);
    } finally {
      await p.close();
    }
  });
});
