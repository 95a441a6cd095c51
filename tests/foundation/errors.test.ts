/** The error envelopes of each family, through the real app (docs/design.md §8). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, memoryLogger, postJson, type TestApp } from "../helpers/app.ts";
import { PROBE_PATHS, probeRoutes } from "../helpers/probes.ts";

let t: TestApp;
const logs = memoryLogger();

beforeAll(async () => {
  t = await createTestApp({ plugins: [probeRoutes], log: logs.log });
});
afterAll(() => t.close());

describe("validation", () => {
  test("chat answers 400 {message, errors}", async () => {
    const { status, body } = await t.json(PROBE_PATHS.chat, postJson({}));
    expect(status).toBe(400);
    expect(body).toEqual({
      message: "Invalid request: body.query: Field required",
      errors: [{ loc: ["body", "query"], msg: "Field required", type: "missing" }],
    });
  });

  test("turns answers 422 with the closed envelope", async () => {
    const { status, body } = await t.json(PROBE_PATHS.turns, postJson({ query: 5 }));
    expect(status).toBe(422);
    expect(body).toEqual({
      error: {
        code: "invalid_request",
        message: "Invalid request: body.query: Input should be a valid string",
      },
    });
  });

  test("search and agents answer FastAPI's 422 detail list", async () => {
    for (const path of [PROBE_PATHS.search, PROBE_PATHS.agents]) {
      const missing = await t.json(path, postJson({}));
      expect(missing.status).toBe(422);
      expect(missing.body).toEqual({
        detail: [{ loc: ["body", "query"], msg: "Field required", type: "missing" }],
      });

      const several = await t.json<{ detail: unknown[] }>(
        path,
        postJson({ query: "", mode: "chaos", extra: 1 }),
      );
      expect(several.status).toBe(422);
      expect(several.body.detail).toEqual([
        { loc: ["body", "query"], msg: "String should have at least 1 character", type: "string_too_short" },
        { loc: ["body", "mode"], msg: 'Input should be "agent", "plan" or "harness"', type: "enum" },
      ]);
    }
  });

  test("too long and wrong-typed query parameters get precise messages", async () => {
    const long = await t.json<{ detail: unknown[] }>(
      PROBE_PATHS.search,
      postJson({ query: "x".repeat(101) }),
    );
    expect(long.body.detail).toEqual([
      { loc: ["body", "query"], msg: "String should have at most 100 characters", type: "string_too_long" },
    ]);
    const notInt = await t.json(`${PROBE_PATHS.agents}?limit=abc`);
    expect(notInt.status).toBe(422);
    expect(notInt.body).toEqual({
      detail: [{ loc: ["query", "limit"], msg: "Input should be a valid integer", type: "int_parsing" }],
    });
    const tooBig = await t.json(`${PROBE_PATHS.agents}?limit=500`);
    expect(tooBig.body).toEqual({
      detail: [
        {
          loc: ["query", "limit"],
          msg: "Input should be less than or equal to 200",
          type: "less_than_equal",
        },
      ],
    });
    const ok = await t.json(`${PROBE_PATHS.agents}?limit=20`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ query: { limit: 20 } });
  });
});

describe("malformed JSON", () => {
  const bad = postJson("{not json");
  test("each family answers its own 4xx envelope", async () => {
    const chat = await t.json<{ message: string }>(PROBE_PATHS.chat, bad);
    expect(chat.status).toBe(400);
    expect(chat.body.message).toContain("could not be parsed");

    const turns = await t.json<{ error: { code: string } }>(PROBE_PATHS.turns, bad);
    expect(turns.status).toBe(422);
    expect(turns.body.error.code).toBe("invalid_request");

    const search = await t.json<{ detail: { type: string; loc: string[] }[] }>(PROBE_PATHS.search, bad);
    expect(search.status).toBe(422);
    expect(search.body.detail[0]).toMatchObject({ type: "json_invalid", loc: ["body"] });
  });
});

describe("not found and wrong method", () => {
  test("unknown routes answer 404 JSON in the family's envelope", async () => {
    const turns = await t.json("/api/sessions/__probe/nothing/here");
    expect(turns.status).toBe(404);
    expect(turns.body).toEqual({
      error: { code: "not_found", message: "No route for GET /api/sessions/__probe/nothing/here" },
    });
    const chat = await t.json("/api/chat/unknown");
    expect(chat.status).toBe(404);
    expect(chat.body).toEqual({ message: "No route for GET /api/chat/unknown" });
    const agents = await t.json("/v1/unknown");
    expect(agents.body).toEqual({ detail: "No route for GET /v1/unknown" });
    const other = await t.json("/no/family/here");
    expect(other.status).toBe(404);
    expect(other.headers.get("content-type")).toContain("application/json");
  });

  test("a wrong method is a 404, never a 500", async () => {
    const response = await t.request(PROBE_PATHS.search, { method: "DELETE" });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ detail: `No route for DELETE ${PROBE_PATHS.search}` });
  });
});

describe("oversized bodies", () => {
  test("a declared length over the limit is refused with 413 before reading", async () => {
    const limit = t.ctx.config.bodyLimitBytes;
    const response = await t.request(PROBE_PATHS.turns, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(limit + 1) },
      body: "{}",
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      error: {
        code: "payload_too_large",
        message: `Request body is larger than the limit of ${limit} bytes`,
      },
    });
  });
});

describe("unexpected errors", () => {
  test("answer 500 with a generic message, log the stack with the request id", async () => {
    const response = await t.request(`${PROBE_PATHS.search}/boom`, { headers: { "x-request-id": "req-42" } });
    expect(response.status).toBe(500);
    expect(response.headers.get("x-request-id")).toBe("req-42");
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ detail: "Internal server error" });
    expect(text).not.toContain("secret");
    expect(text).not.toContain("at ");
    const line = logs.lines().find((l) => l.requestId === "req-42");
    expect(line?.level).toBe("error");
    expect(JSON.stringify(line)).toContain("secret internal detail");
  });

  test("every error response carries a request id; an unusable incoming one is replaced", async () => {
    const response = await t.request("/nowhere", { headers: { "x-request-id": "bad id with spaces" } });
    expect(response.status).toBe(404);
    expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
