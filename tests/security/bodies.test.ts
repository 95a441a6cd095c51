/**
 * Request bodies (server/http/bodies.ts, json-body.ts): JSON routes take only application/json (the
 * form parsers never run for them), the upload route also takes multipart, and parsed JSON is held to
 * a depth, number and key limit before validation and before any handler.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { inspectJson, MAX_JSON_DEPTH } from "../../server/http/json-body.ts";
import { RoutePolicies } from "../../server/http/route-policy.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { PROBE_PATHS, probeRoutes } from "../helpers/probes.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ plugins: [probeRoutes] });
});
afterAll(() => t.close());

const send = (path: string, body: BodyInit, headers: Record<string, string> = {}, method = "POST") =>
  t.request(path, { method, body, headers });

describe("body types", () => {
  test("a JSON route refuses every other type with 415 in each family's envelope", async () => {
    const form = new FormData();
    form.append("query", "hello");
    const others: [BodyInit, Record<string, string>][] = [
      ["query=hello", { "content-type": "application/x-www-form-urlencoded" }],
      ['{"query":"hello"}', { "content-type": "text/plain;charset=UTF-8" }],
      ['{"query":"hello"}', {}],
      [form, {}],
      ['{"query":"hello"}', { "content-type": "application/jsonx" }],
      ['{"query":"hello"}', { "content-type": "application/merge-patch+json" }],
      ['{"query":"hello"}', { "content-type": "application/octet-stream" }],
    ];
    for (const [body, headers] of others) {
      const chat = await send(PROBE_PATHS.chat, body, headers);
      expect({ headers, status: chat.status }).toEqual({ headers, status: 415 });
      expect(((await chat.json()) as { message: string }).message).toContain("application/json");
      const turns = await send(PROBE_PATHS.turns, body, headers);
      expect(await turns.json()).toMatchObject({ error: { code: "unsupported_media_type" } });
      for (const path of [PROBE_PATHS.search, PROBE_PATHS.agents]) {
        const response = await send(path, body, headers);
        expect({ path, status: response.status }).toEqual({ path, status: 415 });
        expect(typeof ((await response.json()) as { detail: unknown }).detail).toBe("string");
      }
    }
  });

  test("a form body that would be valid is still refused: the form parsers never run", async () => {
    const response = await send(PROBE_PATHS.turns, "query=hello", {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(response.status).toBe(415);
    const written = await send("/api/files/append", "path=x.ts&content=hi", {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(written.status).toBe(415);
    expect((await t.json<{ items: unknown[] }>("/api/files")).body.items).toEqual([]);
  });

  test("application/json with parameters passes; a write without a body needs no type", async () => {
    const json = await send(PROBE_PATHS.turns, '{"query":"hi"}', {
      "content-type": "application/json; charset=utf-8",
    });
    expect(await json.json()).toEqual({ echo: { query: "hi" } });
    expect((await t.request("/api/chat/new", { method: "POST" })).status).toBe(200);
  });

  test("the upload route takes multipart (and passes the Origin check); other types are 415", async () => {
    const form = () => {
      const data = new FormData();
      data.append("file", new File(["hello"], "notes.txt", { type: "text/plain" }));
      return data;
    };
    const uploaded = await t.json<{ filename: string; byteSize: number }>("/api/attachments", {
      method: "POST",
      body: form(),
    });
    expect(uploaded).toMatchObject({ status: 200, body: { filename: "notes.txt", byteSize: 5 } });
    const foreign = await t.request("/api/attachments", {
      method: "POST",
      body: form(),
      headers: { origin: "http://evil.example" },
    });
    expect(foreign.status).toBe(403);
    const urlencoded = await send("/api/attachments", "file=hello", {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(urlencoded.status).toBe(415);
    expect(((await urlencoded.json()) as { error: { message: string } }).error.message).toContain(
      "multipart/form-data",
    );
  });

  test("the OpenAPI document gives each body the one type its route takes", async () => {
    const doc = (
      await t.json<{ paths: Record<string, Record<string, { requestBody?: { content: object } }>> }>(
        "/swagger/json",
      )
    ).body;
    const types: Record<string, string[]> = {};
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (operation.requestBody)
          types[`${method.toUpperCase()} ${path}`] = Object.keys(operation.requestBody.content);
      }
    }
    expect(Object.keys(types).length).toBeGreaterThan(25);
    for (const [operation, content] of Object.entries(types)) {
      const expected = UPLOADS.includes(operation) ? ["multipart/form-data"] : ["application/json"];
      expect({ operation, content }).toEqual({ operation, content: expected });
    }
  });
});

/** The routes that take files: a turn's attachment, an index build's documents. */
const UPLOADS = ["POST /api/attachments", "POST /search/index/upload"];

/** `levels` objects nested in one another around 1. */
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

test("body types are learned from the routes' declarations; a :param matches one segment, * the rest", () => {
  const policies = new RoutePolicies();
  policies.learn([
    { method: "POST", path: "/api/attachments", hooks: { type: "multipart/form-data" } },
    { method: "POST", path: "/api/sessions/:id/files", hooks: { type: "multipart/form-data" } },
    { method: "POST", path: "/api/files/append", hooks: {} },
    { method: "ALL", path: "/fwd/:token/*", hooks: { routePolicy: { bodies: "any" } } },
  ] as unknown as Parameters<RoutePolicies["learn"]>[0]);
  expect(policies.bodies("POST", "/api/attachments")).toBe("json+multipart");
  expect(policies.bodies("POST", "/api/sessions/s1/files")).toBe("json+multipart");
  expect(policies.bodies("POST", "/api/sessions//files")).toBe("json");
  expect(policies.bodies("POST", "/api/sessions/s1/files/x")).toBe("json");
  expect(policies.bodies("PUT", "/api/attachments")).toBe("json");
  expect(policies.bodies("POST", "/api/files/append")).toBe("json");
  expect(policies.bodies("PATCH", "/fwd/t/")).toBe("any");
  expect(policies.bodies("PUT", "/fwd/t/a/b")).toBe("any");
  expect(policies.bodies("PUT", "/fwd//a")).toBe("json");
  expect(policies.bodies("PUT", "/fwd")).toBe("json");
});

describe("JSON limits", () => {
  const post = (path: string, text: string) => send(path, text, { "content-type": "application/json" });

  test("nesting at the limit passes; one level more is refused in each family's envelope", async () => {
    // The probe body is the outermost object: `extra` adds the rest.
    const within = await post(PROBE_PATHS.chat, `{"query":"x","extra":${nested(MAX_JSON_DEPTH - 1)}}`);
    expect(within.status).toBe(200);
    const deeper = `{"query":"x","extra":${nested(MAX_JSON_DEPTH)}}`;
    const chat = await post(PROBE_PATHS.chat, deeper);
    expect(chat.status).toBe(400);
    expect(await chat.json()).toMatchObject({ errors: [{ type: "json_too_deep" }] });
    const turns = await post(PROBE_PATHS.turns, deeper);
    expect(turns.status).toBe(422);
    expect(await turns.json()).toMatchObject({ error: { code: "invalid_request" } });
    for (const path of [PROBE_PATHS.search, PROBE_PATHS.agents]) {
      const response = await post(path, deeper);
      expect(response.status).toBe(422);
      expect(await response.json()).toEqual({ detail: [expect.objectContaining({ type: "json_too_deep" })] });
    }
    const array = await post(
      PROBE_PATHS.agents,
      `{"query":"x","extra":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
    );
    expect(array.status).toBe(422);
  });

  test("numbers must be finite and, when whole, exactly representable", async () => {
    for (const bad of ["1e400", "-1e400", "9007199254740993", "1e300", "-18446744073709551616"]) {
      const response = await post(PROBE_PATHS.agents, `{"query":"x","n":${bad}}`);
      expect({ bad, status: response.status }).toEqual({ bad, status: 422 });
      const [issue] = ((await response.json()) as { detail: { loc: unknown[] }[] }).detail;
      expect(issue?.loc).toEqual(["body", "n"]);
    }
    for (const good of ["9007199254740991", "-9007199254740991", "1.5", "-0.25", "1e-300", "0"]) {
      const response = await post(PROBE_PATHS.agents, `{"query":"x","n":${good}}`);
      expect({ good, status: response.status }).toEqual({ good, status: 200 });
    }
  });

  test("a body that is not an object is refused, even where every field is optional", async () => {
    for (const body of ["[]", "[{}]", "1", '"text"', "true", "null"]) {
      const response = await post("/api/chat/abort", body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(await response.json()).toMatchObject({ errors: [{ type: "dict_type" }] });
    }
  });

  test("prototype keys are refused wherever they are", async () => {
    for (const bad of [
      '{"query":"x","__proto__":{"polluted":true}}',
      '{"query":"x","meta":[{"__proto__":{"polluted":true}}]}',
      '{"query":"x","meta":{"constructor":{"prototype":{"polluted":true}}}}',
    ]) {
      const response = await post(PROBE_PATHS.agents, bad);
      expect({ bad, status: response.status }).toEqual({ bad, status: 422 });
      expect(await response.json()).toEqual({ detail: [expect.objectContaining({ type: "forbidden_key" })] });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await post(PROBE_PATHS.agents, '{"query":"x","constructor":"fine"}')).status).toBe(200);
  });

  test("PATCH /v1/fleets/{id} with deep nesting or huge numbers is a 422 and leaves the fleet as it was", async () => {
    const agent = await t.json<{ id: string }>(
      "/v1/agents",
      postJson({ name: "a", role: "r", type: "CUSTOM" }),
    );
    const fleet = await t.json<{ id: string }>(
      "/v1/fleets",
      postJson({ name: "f", type: "CUSTOM", agent_ids: [agent.body.id], coordination_pattern: "sequential" }),
    );
    const path = `/v1/fleets/${fleet.body.id}`;
    const before = await t.json(path);
    for (const body of [
      `{"config":${nested(1_000_000)}}`,
      '{"config":{"a":1e400}}',
      '{"config":{"a":123456789012345678901234567890}}',
    ]) {
      const response = await send(path, body, { "content-type": "application/json" }, "PATCH");
      expect({ body: body.slice(0, 40), status: response.status }).toEqual({
        body: body.slice(0, 40),
        status: 422,
      });
    }
    expect(await t.json(path)).toEqual(before);
  });
});

describe("inspectJson", () => {
  test("accepts any object within the limits and refuses any wrapped past the depth limit", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 8 }),
        fc.integer({ min: 0, max: 3 * MAX_JSON_DEPTH }),
        (value, extra) => {
          if (hasUnsafe(value)) return;
          let wrapped: unknown = value;
          for (let i = 0; i < extra; i++) wrapped = i % 2 ? [wrapped] : { k: wrapped };
          const body = { top: wrapped };
          expect(inspectJson(body)?.type).toBe(depthOf(body) > MAX_JSON_DEPTH ? "json_too_deep" : undefined);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("a body is an object: arrays, scalars and null are refused", () => {
    for (const body of [[], [{}], 1, "text", true, null]) expect(inspectJson(body)?.type).toBe("dict_type");
  });
});

/** Objects and arrays nested at the deepest point (a scalar is 0). */
function depthOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

/** fast-check's JSON may carry keys and numbers the limits refuse on purpose. */
function hasUnsafe(value: unknown): boolean {
  if (typeof value === "number")
    return !Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value));
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some(hasUnsafe);
  return Object.entries(value).some(([k, v]) => k === "__proto__" || k === "constructor" || hasUnsafe(v));
}
