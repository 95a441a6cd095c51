/** Memory over HTTP: CRUD with the owner checked, FTS5/BM25 search, all-of tag filters, paging, isolation. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { as } from "../helpers/agents.ts";
import type { TestApp } from "../helpers/app.ts";
import { createTestApp } from "../helpers/app.ts";
import { twoUsers } from "../helpers/users.ts";

let t: TestApp;
let api: ReturnType<typeof as>;
let agentId: string;
let fleetId: string;
beforeAll(async () => {
  t = await createTestApp();
  api = as(t);
  agentId = (await api.post("/v1/agents", { name: "Mem", role: "keeper" })).body.id;
  fleetId = (await api.post("/v1/fleets", { name: "Fl", type: "CUSTOM", agent_ids: [agentId] })).body.id;
});
afterAll(() => t.close());

const remember = async (content: string, extra: Record<string, unknown> = {}) => {
  const r = await api.post("/v1/memory", {
    owner_id: agentId,
    owner_type: "agent",
    type: "INSIGHTS",
    content,
    ...extra,
  });
  expect(r.status).toBe(200);
  return r.body;
};

describe("memory CRUD", () => {
  test("create, read, patch, delete", async () => {
    const m = await remember("The user prefers tabs over spaces", {
      type: "PREFERENCES",
      tags: ["style"],
      metadata: { source: "chat" },
      importance: 0.9,
    });
    expect(m).toMatchObject({
      owner_id: agentId,
      owner_type: "agent",
      type: "PREFERENCES",
      tags: ["style"],
      metadata: { source: "chat" },
      importance: 0.9,
    });
    expect((await api.get(`/v1/memory/${m.id}`)).body).toEqual(m);
    const patched = await api.patch(`/v1/memory/${m.id}`, {
      content: "The user prefers spaces",
      tags: ["style", "fmt"],
    });
    expect(patched.body).toMatchObject({
      content: "The user prefers spaces",
      tags: ["style", "fmt"],
      importance: 0.9,
    });
    // The full-text index follows the update.
    expect((await api.get(`/v1/memory/search?content_query=tabs&owner_id=${agentId}`)).body.total).toBe(0);
    expect((await api.get(`/v1/memory/search?content_query=spaces&owner_id=${agentId}`)).body.total).toBe(1);
    expect((await api.del(`/v1/memory/${m.id}`)).body).toEqual({ id: m.id, deleted: true });
    expect((await api.get(`/v1/memory/${m.id}`)).status).toBe(404);
    expect((await api.del(`/v1/memory/${m.id}`)).status).toBe(404);
    expect((await api.get("/v1/memory/search?content_query=spaces")).body.total).toBe(0);
  });

  test("the owner must exist; enums and ranges are validated", async () => {
    const missing = await api.post("/v1/memory", {
      owner_id: "ghost",
      owner_type: "agent",
      type: "CONTEXT",
      content: "x",
    });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0].loc).toEqual(["body", "owner_id"]);
    // An agent id given as a fleet is not a fleet.
    const wrongType = await api.post("/v1/memory", {
      owner_id: agentId,
      owner_type: "fleet",
      type: "CONTEXT",
      content: "x",
    });
    expect(wrongType.status).toBe(422);
    for (const body of [
      { owner_id: agentId, owner_type: "agent", type: "DREAMS", content: "x" },
      { owner_id: agentId, owner_type: "robot", type: "CONTEXT", content: "x" },
      { owner_id: agentId, owner_type: "agent", type: "CONTEXT", content: "" },
      { owner_id: agentId, owner_type: "agent", type: "CONTEXT", content: "x", importance: 2 },
    ]) {
      const r = await api.post("/v1/memory", body);
      expect({ body, status: r.status }).toEqual({ body, status: 422 });
    }
    const m = await remember("kept");
    expect((await api.patch(`/v1/memory/${m.id}`, { type: "NOPE" })).status).toBe(422);
    expect((await api.get(`/v1/memory/${m.id}`)).body.type).toBe("INSIGHTS");
    await api.del(`/v1/memory/${m.id}`);
  });
});

describe("memory search", () => {
  test("BM25 ranks the entries that match more query words higher", async () => {
    const weak = await remember("Kubernetes clusters need monitoring");
    const strong = await remember("Deploy to the kubernetes cluster with helm; the deploy uses helm charts");
    const none = await remember("Coffee is best brewed slowly");
    const r = await api.get("/v1/memory/search?content_query=deploy%20helm%20kubernetes");
    expect(r.status).toBe(200);
    const ids = r.body.results.map((m: { id: string }) => m.id);
    expect(ids).toEqual([strong.id, weak.id]);
    expect(ids).not.toContain(none.id);
    expect(r.body.results[0].score).toBeGreaterThan(r.body.results[1].score);
    // Porter stemming: "deploying" finds "deploy".
    expect((await api.get("/v1/memory/search?content_query=deploying")).body.results[0].id).toBe(strong.id);
    // FTS5 syntax in user text is inert, never an error.
    const odd = await api.get(`/v1/memory/search?content_query=${encodeURIComponent('helm" OR NEAR(( *')}`);
    expect(odd.status).toBe(200);
    expect(odd.body.results[0].id).toBe(strong.id);
    const empty = await api.get(`/v1/memory/search?content_query=${encodeURIComponent("?!")}`);
    expect(empty.status).toBe(422);
    expect(empty.body.detail[0].loc).toEqual(["query", "content_query"]);
    for (const m of [weak, strong, none]) await api.del(`/v1/memory/${m.id}`);
  });

  test("every listed tag must match (repeated or comma-separated), with owner and type filters", async () => {
    const ab = await remember("alpha beta", { tags: ["a", "b"] });
    const a = await remember("alpha only", { tags: ["a"] });
    const abc = await remember("all three", { tags: ["a", "b", "c"], type: "SKILLS" });
    const fleetEntry = (
      await api.post("/v1/memory", {
        owner_id: fleetId,
        owner_type: "fleet",
        type: "CONTEXT",
        content: "fleet note",
        tags: ["a"],
      })
    ).body;
    const ids = async (q: string) =>
      (await api.get(`/v1/memory/search?${q}`)).body.results.map((m: { id: string }) => m.id).sort();
    expect(await ids("tags=a&tags=b")).toEqual([ab.id, abc.id].sort());
    expect(await ids("tags=a,b,c")).toEqual([abc.id]);
    expect(await ids("tags=b&tags=zzz")).toEqual([]);
    expect(await ids("tags=a")).toEqual([ab.id, a.id, abc.id, fleetEntry.id].sort());
    expect(await ids("tags=a&owner_type=fleet")).toEqual([fleetEntry.id]);
    expect(await ids(`tags=a&owner_id=${agentId}&type=SKILLS`)).toEqual([abc.id]);
    expect(await ids("tags=a&content_query=alpha")).toEqual([ab.id, a.id].sort());
    expect((await api.get("/v1/memory/search?type=NOPE")).status).toBe(422);
    // Deleting the fleet deletes its memory.
    const f2 = (await api.post("/v1/fleets", { name: "Tmp", type: "CUSTOM", agent_ids: [agentId] })).body;
    const tmp = (
      await api.post("/v1/memory", { owner_id: f2.id, owner_type: "fleet", type: "CONTEXT", content: "temp" })
    ).body;
    await api.del(`/v1/fleets/${f2.id}`);
    expect((await api.get(`/v1/memory/${tmp.id}`)).status).toBe(404);
    for (const m of [ab, a, abc, fleetEntry]) await api.del(`/v1/memory/${m.id}`);
  });

  test("pagination: total, has_more, offsets past the end, limits out of range", async () => {
    const made = [];
    for (let i = 0; i < 5; i++)
      made.push(await remember(`paging note ${i}`, { importance: i / 10, tags: ["page"] }));
    const first = await api.get("/v1/memory/search?tags=page&limit=2");
    expect(first.body.total).toBe(5);
    expect(first.body.has_more).toBe(true);
    // Without a query: most important first.
    expect(first.body.results.map((m: { id: string }) => m.id)).toEqual([made[4]?.id, made[3]?.id]);
    const last = await api.get("/v1/memory/search?tags=page&limit=2&offset=4");
    expect(last.body.results).toHaveLength(1);
    expect(last.body.has_more).toBe(false);
    expect((await api.get("/v1/memory/search?tags=page&offset=99")).body).toEqual({
      results: [],
      total: 5,
      has_more: false,
    });
    const ranked = await api.get("/v1/memory/search?content_query=paging&limit=2&offset=2");
    expect(ranked.body).toMatchObject({ total: 5, has_more: true });
    expect(ranked.body.results).toHaveLength(2);
    for (const q of ["limit=0", "limit=1000", "offset=-3"])
      expect((await api.get(`/v1/memory/search?${q}`)).status).toBe(422);
    for (const m of made) await api.del(`/v1/memory/${m.id}`);
  });
});

test("memory is isolated between owners", async () => {
  const app = await createTestApp(twoUsers());
  try {
    const alice = as(app, "alice");
    const bob = as(app, "bob");
    const a = (await alice.post("/v1/agents", { name: "A", role: "r" })).body;
    const m = (
      await alice.post("/v1/memory", {
        owner_id: a.id,
        owner_type: "agent",
        type: "CONTEXT",
        content: "secret plan",
      })
    ).body;
    expect((await bob.get(`/v1/memory/${m.id}`)).status).toBe(404);
    expect((await bob.patch(`/v1/memory/${m.id}`, { content: "mine" })).status).toBe(404);
    expect((await bob.del(`/v1/memory/${m.id}`)).status).toBe(404);
    expect((await bob.get("/v1/memory/search?content_query=secret")).body.total).toBe(0);
    expect(
      (await bob.post("/v1/memory", { owner_id: a.id, owner_type: "agent", type: "CONTEXT", content: "x" }))
        .status,
    ).toBe(422);
    expect((await alice.get("/v1/memory/search?content_query=secret")).body.total).toBe(1);
  } finally {
    await app.close();
  }
});
