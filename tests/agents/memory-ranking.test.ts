// biome-ignore-all lint/suspicious/noExplicitAny: response bodies are read loosely; the assertions check them.
/**
 * Memory search's ranking follows every write. On PostgreSQL BM25 reads stored postings (`memory_terms`,
 * kept by a trigger: server/agents/migrations/0002_memory_terms.pg.sql); here memories are written,
 * edited (content and tags) and deleted through the API until a term's rarity flips, and the ranking must
 * flip with it. The edited app must then rank exactly as a fresh SQLite app (FTS5's own bm25(), tags
 * weighing half) holding only the final entries: same order, same scores. On SQLite this holds FTS5 to
 * itself; on PostgreSQL (`ATRIUM_TEST_DATABASE=postgres`) it fails if the postings miss an insert, an
 * edit or a delete, or if their weights drift from FTS5's.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { as } from "../helpers/agents.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
let reference: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  reference = await createTestApp({ env: { APP_DATABASE_URL: "" } });
});
afterAll(async () => {
  await t.close();
  await reference.close();
});

async function agentOf(app: TestApp) {
  const api = as(app);
  const id = (await api.post("/v1/agents", { name: "Keeper", role: "keeper" })).body.id as string;
  const remember = async (content: string, tags: string[] = []) => {
    const r = await api.post("/v1/memory", {
      owner_id: id,
      owner_type: "agent",
      type: "CONTEXT",
      content,
      tags,
    });
    expect(r.status).toBe(200);
    return r.body.id as string;
  };
  const search = async (query: string) => {
    const r = await api.get(`/v1/memory/search?content_query=${encodeURIComponent(query)}&owner_id=${id}`);
    expect(r.status).toBe(200);
    return r.body as { results: any[]; total: number };
  };
  return { id, api, remember, search };
}

/** A search's entries as [content, score], best first; entries that tie are put in content order. */
const ranked = (found: { results: any[] }, contentOf = (r: any) => r.content as string) =>
  found.results
    .map((r) => [contentOf(r), r.score] as [string, number])
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));

const FILLERS = ["gamma delta", "delta epsilon", "epsilon zeta", "zeta eta", "eta theta", "theta gamma"];

test("writes, edits and deletes move the ranking, which then equals FTS5's on the final entries", async () => {
  const { id, api, remember, search } = await agentOf(t);
  const alpha = await remember("alpha gamma");
  const beta = await remember("beta gamma");
  const betas = [await remember("beta delta"), await remember("beta epsilon")];
  const fillers: string[] = [];
  for (const text of FILLERS) fillers.push(await remember(text));

  // alpha is in one entry, beta in three: the rarer alpha ranks first.
  let found = await search("alpha beta");
  expect(found.total).toBe(4);
  expect(found.results[0].id).toBe(alpha);

  // Two of beta's entries go, and alpha spreads: into a filler's content and another's tags.
  for (const id of betas) expect((await api.del(`/v1/memory/${id}`)).status).toBe(200);
  expect((await api.patch(`/v1/memory/${fillers[0]}`, { content: "alpha alpha delta" })).status).toBe(200);
  expect((await api.patch(`/v1/memory/${fillers[1]}`, { tags: ["alpha"] })).status).toBe(200);
  found = await search("alpha beta");
  expect(found.total).toBe(4);
  // Now beta is the rare term: its one entry ranks first.
  expect(found.results[0].id).toBe(beta);
  // An edit that takes a term out takes the entry out of its matches.
  expect((await api.patch(`/v1/memory/${fillers[2]}`, { content: "zeta only" })).status).toBe(200);
  expect((await search("epsilon")).total).toBe(1);

  // The same final entries, written once into a fresh SQLite app: FTS5 ranks them the same.
  const ref = await agentOf(reference);
  const byContent = new Map<string, string>();
  for (const entry of (await api.get(`/v1/memory/search?owner_id=${id}&limit=200`)).body.results)
    byContent.set(await ref.remember(entry.content, entry.tags), entry.content);
  expect(byContent.size).toBe(8);
  for (const query of ["alpha beta", "alpha", "beta gamma", "delta epsilon zeta", "gamma theta alpha"]) {
    const mine = ranked(await search(query));
    const theirs = ranked(await ref.search(query), (r) => byContent.get(r.id) as string);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.map(([content]) => content)).toEqual(theirs.map(([content]) => content));
    for (const [i, [, score]] of mine.entries()) expect(score).toBeCloseTo(theirs[i]?.[1] as number, 9);
  }
});

test("a page past the last match still reports how many entries match", async () => {
  const { id, api, remember } = await agentOf(t);
  for (const text of ["kappa one", "kappa two", "lambda three"]) await remember(text);
  for (const [limit, offset] of [
    [1, 0],
    [1, 1],
    [5, 2],
    [5, 9],
  ]) {
    const r = await api.get(
      `/v1/memory/search?content_query=kappa&owner_id=${id}&limit=${limit}&offset=${offset}`,
    );
    expect(r.body.total).toBe(2);
    expect(r.body.results).toHaveLength(Math.max(0, Math.min(limit, 2 - offset)));
  }
});

test("an agent with over a thousand entries (searched through the hashed membership test) ranks as FTS5 does", async () => {
  // Fresh apps: FTS5's bm25() counts every entry of its table, so each holds only these entries.
  const engine = await createTestApp();
  const fresh = await createTestApp({ env: { APP_DATABASE_URL: "" } });
  const mine = await agentOf(engine);
  const theirs = await agentOf(fresh);
  // 1,040 entries: 40 hold the asked terms with distinct lengths and frequencies (no ties), the rest fill
  // the scope past bm25Postings' array path (1,000 entries).
  const texts: string[] = [];
  for (let i = 0; i < 40; i++)
    texts.push(
      [
        ...Array(1 + (i % 3)).fill("omega"),
        ...(i % 4 === 0 ? ["sigma"] : []),
        ...Array(i + 1).fill("filler"),
      ].join(" "),
    );
  for (let i = 0; i < 1000; i++) texts.push(`plain entry number ${i}`);
  for (const text of texts) {
    await mine.remember(text);
    await theirs.remember(text);
  }
  for (const query of ["omega", "omega sigma", "sigma"]) {
    const a = await mine.search(query);
    const b = await theirs.search(query);
    expect(a.total).toBe(b.total);
    expect(a.total).toBeGreaterThan(0);
    const [x, y] = [ranked(a), ranked(b)];
    expect(x.map(([content]) => content)).toEqual(y.map(([content]) => content));
    for (const [i, [, score]] of x.entries()) expect(score).toBeCloseTo(y[i]?.[1] as number, 9);
  }
  await engine.close();
  await fresh.close();
});
