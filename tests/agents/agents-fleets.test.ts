/** Agents and fleets over HTTP: CRUD, validation, list filters and paging, delete rules, ownership. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { as } from "../helpers/agents.ts";
import type { TestApp } from "../helpers/app.ts";
import { createTestApp } from "../helpers/app.ts";
import { twoUsers } from "../helpers/users.ts";

let t: TestApp;
let api: ReturnType<typeof as>;
beforeAll(async () => {
  t = await createTestApp();
  api = as(t);
});
afterAll(() => t.close());

const agent = (name: string, extra: Record<string, unknown> = {}) =>
  api.post("/v1/agents", { name, role: `${name} role`, ...extra }).then((r) => {
    expect(r.status).toBe(200);
    return r.body;
  });

describe("agents", () => {
  test("create, read, patch, list with total and the default model", async () => {
    const created = await agent("Ada", {
      capabilities: ["CODE_REVIEW", "TESTING"],
      instructions: "Be terse.",
      config: { temperature: 0.3, custom: "kept" },
    });
    expect(created).toMatchObject({
      name: "Ada",
      role: "Ada role",
      capabilities: ["CODE_REVIEW", "TESTING"],
      model: null,
      effective_model: "offline/offline",
      instructions: "Be terse.",
      config: { temperature: 0.3, custom: "kept" },
      status: "active",
    });
    expect(Date.parse(created.created_at)).not.toBeNaN();
    expect((await api.get(`/v1/agents/${created.id}`)).body).toEqual(created);

    const patched = await api.patch(`/v1/agents/${created.id}`, {
      status: "inactive",
      description: "reviews",
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ status: "inactive", description: "reviews", name: "Ada" });
    expect(patched.body.updated_at >= created.updated_at).toBe(true);

    const inactive = await api.get("/v1/agents?status=inactive");
    expect(inactive.body.agents.map((a: { id: string }) => a.id)).toEqual([created.id]);
    expect(inactive.body.total).toBe(1);
  });

  test("an explicit model must resolve; null goes back to the default", async () => {
    const bad = await api.post("/v1/agents", { name: "M", role: "r", model: "nosuch/model" });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["body", "model"]);
    const ok = await agent("M", { model: "offline/offline" });
    expect(ok.model).toBe("offline/offline");
    const reset = await api.patch(`/v1/agents/${ok.id}`, { model: null });
    expect(reset.body).toMatchObject({ model: null, effective_model: "offline/offline" });
  });

  test("invalid input is a 422 naming the field and changes nothing", async () => {
    const before = (await api.get("/v1/agents")).body.total;
    const cases: [unknown, (string | number)[]][] = [
      [{ name: "x", role: "r", capabilities: ["FLYING"] }, ["body", "capabilities", 0]],
      [{ name: "x", role: "r", status: "sleeping" }, ["body", "status"]],
      [{ role: "r" }, ["body", "name"]],
      [{ name: "x", role: "r", config: { temperature: 5 } }, ["body", "config", "temperature"]],
    ];
    for (const [body, loc] of cases) {
      const r = await api.post("/v1/agents", body);
      expect({ body, status: r.status, loc: r.body.detail?.[0]?.loc }).toEqual({ body, status: 422, loc });
    }
    const malformed = await api.post("/v1/agents", "{not json");
    expect(malformed.status).toBe(422);
    const a = await agent("Valid");
    const patch = await api.patch(`/v1/agents/${a.id}`, { capabilities: ["NOPE"] });
    expect(patch.status).toBe(422);
    expect((await api.patch(`/v1/agents/${a.id}`, {})).status).toBe(422);
    expect((await api.get(`/v1/agents/${a.id}`)).body.capabilities).toEqual([]);
    expect((await api.get("/v1/agents")).body.total).toBe(before + 1);
  });

  test("paging edges: limit 1..200, offset past the end, has_more", async () => {
    const total = (await api.get("/v1/agents")).body.total;
    const first = await api.get("/v1/agents?limit=1&offset=0");
    expect(first.body.agents).toHaveLength(1);
    expect(first.body.has_more).toBe(total > 1);
    const last = await api.get(`/v1/agents?limit=1&offset=${total - 1}`);
    expect(last.body.agents).toHaveLength(1);
    expect(last.body.has_more).toBe(false);
    const past = await api.get(`/v1/agents?offset=${total + 5}`);
    expect(past.body).toEqual({ agents: [], total, has_more: false });
    for (const q of ["limit=0", "limit=201", "limit=abc", "offset=-1"]) {
      const r = await api.get(`/v1/agents?${q}`);
      expect({ q, status: r.status }).toEqual({ q, status: 422 });
      expect(r.body.detail[0].loc[0]).toBe("query");
    }
  });

  test("unknown ids are 404 with {detail}", async () => {
    for (const r of [
      await api.get("/v1/agents/nope"),
      await api.patch("/v1/agents/nope", { name: "x" }),
      await api.del("/v1/agents/nope"),
    ]) {
      expect(r.status).toBe(404);
      expect(typeof r.body.detail).toBe("string");
    }
  });
});

describe("fleets", () => {
  test("create with ordered members, read, patch, filter by type and status", async () => {
    const a = await agent("Lead");
    const b = await agent("Member");
    const created = await api.post("/v1/fleets", {
      name: "Crew",
      type: "CODE_DEVELOPMENT",
      agent_ids: [b.id, a.id],
      coordination_pattern: "hierarchical",
      config: { max_turns: 5, temperature: 0.2, lead_agent_id: a.id },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: "Crew",
      type: "CODE_DEVELOPMENT",
      agent_ids: [b.id, a.id],
      coordination_pattern: "hierarchical",
      config: { max_turns: 5, temperature: 0.2, lead_agent_id: a.id },
      status: "active",
    });
    const other = await api.post("/v1/fleets", { name: "Research", type: "RESEARCH", agent_ids: [a.id] });
    expect(other.body.coordination_pattern).toBe("sequential");

    const byType = await api.get("/v1/fleets?type=RESEARCH");
    expect(byType.body.fleets.map((f: { id: string }) => f.id)).toEqual([other.body.id]);
    await api.patch(`/v1/fleets/${other.body.id}`, { status: "archived" });
    const archived = await api.get("/v1/fleets?status=archived");
    expect(archived.body).toMatchObject({ total: 1, has_more: false });
    expect((await api.get("/v1/fleets?type=CREATIVE")).body).toEqual({
      fleets: [],
      total: 0,
      has_more: false,
    });

    const reordered = await api.patch(`/v1/fleets/${created.body.id}`, { agent_ids: [a.id, b.id] });
    expect(reordered.body.agent_ids).toEqual([a.id, b.id]);
    expect((await api.get(`/v1/fleets/${created.body.id}`)).body.agent_ids).toEqual([a.id, b.id]);
  });

  test("unknown agent ids, a lead outside the fleet and bad enums are 422", async () => {
    const a = await agent("Solo");
    const unknown = await api.post("/v1/fleets", { name: "F", type: "CUSTOM", agent_ids: [a.id, "ghost"] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toEqual([
      { loc: ["body", "agent_ids", 1], msg: "Agent ghost does not exist", type: "value_error" },
    ]);
    const lead = await api.post("/v1/fleets", {
      name: "F",
      type: "CUSTOM",
      agent_ids: [a.id],
      config: { lead_agent_id: "someone" },
    });
    expect(lead.status).toBe(422);
    expect(lead.body.detail[0].loc).toEqual(["body", "config", "lead_agent_id"]);
    for (const body of [
      { name: "F", type: "WAR", agent_ids: [a.id] },
      { name: "F", type: "CUSTOM", agent_ids: [a.id], coordination_pattern: "chaotic" },
      { name: "F", type: "CUSTOM", agent_ids: [] },
      { name: "F", type: "CUSTOM", agent_ids: [a.id, a.id] },
      { name: "F", type: "CUSTOM", agent_ids: [a.id], config: { max_turns: 0 } },
    ]) {
      const r = await api.post("/v1/fleets", body);
      expect({ body, status: r.status }).toEqual({ body, status: 422 });
    }
    expect((await api.get("/v1/fleets?type=CUSTOM")).body.total).toBe(0);
  });

  test("deleting an agent a fleet uses is 409 naming the fleets; after removal it succeeds", async () => {
    const a = await agent("Shared");
    const b = await agent("Other");
    const f1 = (await api.post("/v1/fleets", { name: "Alpha", type: "SUPPORT", agent_ids: [a.id, b.id] }))
      .body;
    const f2 = (await api.post("/v1/fleets", { name: "Beta", type: "SUPPORT", agent_ids: [a.id] })).body;
    const refused = await api.del(`/v1/agents/${a.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain(`Alpha (${f1.id})`);
    expect(refused.body.detail).toContain(`Beta (${f2.id})`);
    expect((await api.get(`/v1/agents/${a.id}`)).status).toBe(200);

    await api.patch(`/v1/fleets/${f1.id}`, { agent_ids: [b.id] });
    expect((await api.del(`/v1/fleets/${f2.id}`)).body).toEqual({ id: f2.id, deleted: true });
    expect((await api.del(`/v1/agents/${a.id}`)).body).toEqual({ id: a.id, deleted: true });
    expect((await api.get(`/v1/agents/${a.id}`)).status).toBe(404);
    expect((await api.get(`/v1/fleets/${f2.id}`)).status).toBe(404);
    expect((await api.get(`/v1/agents/${b.id}`)).status).toBe(200);
  });
});

describe("ownership", () => {
  test("another owner's agents and fleets are invisible (404), and cannot be fleet members", async () => {
    const app = await createTestApp(twoUsers());
    try {
      const alice = as(app, "alice");
      const bob = as(app, "bob");
      const a = (await alice.post("/v1/agents", { name: "A", role: "r" })).body;
      const f = (await alice.post("/v1/fleets", { name: "F", type: "CUSTOM", agent_ids: [a.id] })).body;
      expect((await bob.get(`/v1/agents/${a.id}`)).status).toBe(404);
      expect((await bob.patch(`/v1/agents/${a.id}`, { name: "mine" })).status).toBe(404);
      expect((await bob.del(`/v1/agents/${a.id}`)).status).toBe(404);
      expect((await bob.get(`/v1/fleets/${f.id}`)).status).toBe(404);
      expect((await bob.del(`/v1/fleets/${f.id}`)).status).toBe(404);
      expect((await bob.get("/v1/agents")).body).toEqual({ agents: [], total: 0, has_more: false });
      expect((await bob.get("/v1/fleets")).body.total).toBe(0);
      const steal = await bob.post("/v1/fleets", { name: "G", type: "CUSTOM", agent_ids: [a.id] });
      expect(steal.status).toBe(422);
      expect((await alice.get(`/v1/agents/${a.id}`)).body.name).toBe("A");
      const anonymous = await app.request("/v1/agents");
      expect(anonymous.status).toBe(401);
    } finally {
      await app.close();
    }
  });
});
