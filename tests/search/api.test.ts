/**
 * The search family over HTTP, offline (no model configured): indexing route, local and global search,
 * streams, follow-up questions, root probe, the debug route, validation and owner scoping.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, memoryLogger, postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { readChunks } from "../helpers/streams.ts";
import { asUser, twoUsers } from "../helpers/users.ts";
import { fixtureDocuments } from "./fixtures.ts";

type Row = Record<string, string | number | boolean>;
interface SearchBody {
  response: string;
  context_data: Record<string, Row[]>;
}

const NO_ANSWER = "I am sorry but I am unable to answer this question given the provided data.";
const documents = fixtureDocuments().map((d) => ({ name: d.title, text: d.text }));
let t: TestApp;
const logs = memoryLogger();

beforeAll(async () => {
  t = await createTestApp({ log: logs.log });
});
afterAll(() => t.close());

const search = (path: string, body: unknown) => t.json<SearchBody>(path, postJson(body));

describe("before any index exists", () => {
  test("search answers 200 saying so, with empty tables", async () => {
    for (const path of ["/search/local", "/search/global"]) {
      const { status, body } = await search(path, { query: "Who is Scrooge?" });
      expect(status).toBe(200);
      expect(body.response).toContain("No search index named 'default' has been built yet");
      for (const rows of Object.values(body.context_data)) expect(rows).toEqual([]);
    }
    const questions = await t.json<{ questions: string[] }>(
      "/generate_questions",
      postJson({ query: "Scrooge" }),
    );
    expect(questions).toMatchObject({ status: 200, body: { questions: [] } });
  });
});

describe("indexing over HTTP", () => {
  test("builds the index and reports what it did; unchanged documents are skipped", async () => {
    const built = await t.json<Record<string, unknown>>("/search/index", postJson({ documents }));
    expect(built.status).toBe(200);
    expect(built.body).toMatchObject({ index: "default", documents: 2, documents_indexed: 2, warnings: [] });
    expect(built.body.entities as number).toBeGreaterThan(10);
    expect((built.body.modularity as number[])[0]).toBeGreaterThan(0);
    const again = await t.json<Record<string, unknown>>("/search/index", postJson({ documents }));
    expect(again.body).toMatchObject({
      documents_indexed: 0,
      documents_unchanged: 2,
      entities: built.body.entities,
    });
    const list = await t.json<{ indexes: { name: string; documents: number }[] }>("/search/indexes");
    expect(list.body.indexes).toMatchObject([{ name: "default", documents: 2 }]);
  });

  test("binary text is skipped with a warning; a bad index name is a 422", async () => {
    const res = await t.json<{ warnings: string[]; documents: number }>(
      "/search/index",
      postJson({ name: "scratch", documents: [{ name: "x.bin", text: "a\u0000b" }] }),
    );
    expect(res.status).toBe(200);
    expect(res.body.warnings).toEqual(["x.bin: skipped, binary content (NUL bytes)"]);
    expect(res.body.documents).toBe(0);
    const bad = await t.json<{ detail: { loc: unknown[] }[] }>(
      "/search/index",
      postJson({ name: "../x", documents }),
    );
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]?.loc).toEqual(["body", "name"]);
  });
});

describe("local search", () => {
  test("a question about a named character returns context naming that entity and its sources", async () => {
    const { status, body } = await search("/search/local", { query: "Who is Jacob Marley?" });
    expect(status).toBe(200);
    const { entities, relationships, sources, reports, claims } = body.context_data as Record<string, Row[]>;
    expect(entities?.[0]?.entity).toBe("Jacob Marley");
    expect(entities?.[0]).toMatchObject({ in_context: true });
    expect(typeof entities?.[0]?.["number of relationships"]).toBe("number");
    expect(relationships?.length).toBeGreaterThan(0);
    expect(relationships?.some((r) => r.source === "Jacob Marley" || r.target === "Jacob Marley")).toBe(true);
    expect(sources?.some((s) => String(s.text).includes("Marley"))).toBe(true);
    expect(reports?.length).toBeGreaterThan(0);
    expect(claims).toEqual([]);
    expect(body.response).toContain("Jacob Marley");
    expect(body.response).toMatch(/\[Data: Sources \(\d+\); Entities \([\d, +more]+\)\]/);
    // Every cited source is one of the in-context sources.
    const cited = [...body.response.matchAll(/Sources \((\d+)\)/g)].map((m) => m[1]);
    const inContext = new Set(sources?.filter((s) => s.in_context).map((s) => s.id));
    for (const id of cited) expect(inContext.has(id as string)).toBe(true);
  });

  test("different characters give different context", async () => {
    const tim = await search("/search/local", { query: "What happens to Tiny Tim at dinner?" });
    const names = tim.body.context_data.entities?.map((e) => e.entity);
    expect(names?.[0]).toBe("Tiny Tim");
    expect(names).not.toContain("Jacob Marley");
    expect(tim.body.context_data.sources?.some((s) => String(s.text).includes("Tiny Tim"))).toBe(true);
  });

  test("a query about nothing in the text gets the fixed answer, not an invention", async () => {
    const { body } = await search("/search/local", { query: "quantum chromodynamics" });
    expect(body.response).toBe(NO_ANSWER);
    expect(body.context_data.entities).toEqual([]);
  });
});

describe("global search", () => {
  test("maps over community reports and cites them", async () => {
    const { status, body } = await search("/search/global", {
      query: "What do the Cratchits do for Christmas dinner?",
      community_level: 0,
    });
    expect(status).toBe(200);
    const reports = body.context_data.reports ?? [];
    expect(reports.length).toBeGreaterThan(0);
    expect(reports.some((r) => r.in_context)).toBe(true);
    expect(
      (body.context_data.points ?? []).every((p) => (p.score as number) > 0 && (p.score as number) <= 100),
    ).toBe(true);
    const cited = [...body.response.matchAll(/Reports \(([\d, ]+)\)/g)].flatMap((m) =>
      (m[1] as string).split(", "),
    );
    expect(cited.length).toBeGreaterThan(0);
    for (const id of cited) expect(reports.some((r) => r.id === id && r.in_context)).toBe(true);
    expect(body.response.toLowerCase()).toContain("cratchit");
  });

  test("nothing relevant gives the fixed 'unable to answer' message", async () => {
    const { body } = await search("/search/global", { query: "quantum chromodynamics" });
    expect(body.response).toBe(NO_ANSWER);
  });
});

describe("follow-up questions", () => {
  test("five questions grounded in the entities around the query", async () => {
    const { status, body } = await t.json<{ questions: string[] }>(
      "/generate_questions",
      postJson({ query: "Tell me about Bob Cratchit" }),
    );
    expect(status).toBe(200);
    expect(body.questions).toHaveLength(5);
    expect(new Set(body.questions).size).toBe(5);
    for (const q of body.questions) expect(q.endsWith("?")).toBe(true);
    expect(body.questions.some((q) => q.includes("Bob Cratchit"))).toBe(true);
    // The family in the plural is asked about as a family, not as one person called "Cratchits".
    expect(body.questions.some((q) => q.includes("the Cratchits"))).toBe(true);
    for (const q of body.questions) expect(q).not.toMatch(/\b(does|are) Cratchits\b|, Cratchits\b/);
  });
});

describe("streams", () => {
  test("context first, then deltas, then done with the whole answer, as SSE", async () => {
    const server = listen(t);
    try {
      for (const path of ["/search/local/stream", "/search/global/stream"]) {
        const response = await fetch(
          `${server.url}${path}`,
          postJson({ query: "Who is Fred, Scrooge's nephew?" }),
        );
        expect(response.headers.get("content-type")).toStartWith("text/event-stream");
        const frames: { event: string; data: unknown }[] = [];
        for await (const frame of readChunks(response.body as ReadableStream<Uint8Array>, "\n\n")) {
          const event = frame.match(/^event: (.*)$/m)?.[1];
          const data = frame.match(/^data: (.*)$/m)?.[1];
          if (event && data) frames.push({ event, data: JSON.parse(data) });
        }
        expect(frames[0]?.event).toBe("context");
        expect(frames.at(-1)?.event).toBe("done");
        const deltas = frames
          .filter((f) => f.event === "delta")
          .map((f) => (f.data as { text: string }).text);
        expect(deltas.length).toBeGreaterThan(1);
        expect(frames.slice(1, -1).every((f) => f.event === "delta")).toBe(true);
        expect(frames.at(-1)?.data).toEqual({ response: deltas.join("") });
        // The same answer as the plain route.
        const plain = await search(path.replace("/stream", ""), { query: "Who is Fred, Scrooge's nephew?" });
        expect(deltas.join("")).toBe(plain.body.response);
        expect(frames[0]?.data).toEqual(plain.body.context_data);
      }
    } finally {
      await server.stop();
    }
  });
});

describe("probes", () => {
  test("GET / is the JSON root probe", async () => {
    const { status, body } = await t.json<Record<string, string>>("/", {
      headers: { accept: "application/json" },
    });
    expect(status).toBe(200);
    expect(body.message).toStartWith("Welcome to");
    expect(body.docs).toBe("/swagger");
  });

  test("GET /monitor-debug answers a logged 500 {detail} with its request id", async () => {
    const response = await t.request("/monitor-debug", { headers: { "x-request-id": "probe-123" } });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ detail: "Internal server error" });
    expect(response.headers.get("x-request-id")).toBe("probe-123");
    const line = logs.lines().find((l) => l.requestId === "probe-123");
    expect(line).toMatchObject({ level: "error", path: "/monitor-debug" });
    expect(JSON.stringify(line)).toContain("raised on purpose");
  });

  test("the routes are documented in Swagger, the indexing extension included", async () => {
    const doc = await t.json<{ paths: Record<string, unknown> }>("/swagger/json");
    for (const path of [
      "/search/local",
      "/search/global",
      "/search/local/stream",
      "/search/global/stream",
      "/generate_questions",
      "/monitor-debug",
      "/search/index",
    ]) {
      expect(Object.keys(doc.body.paths)).toContain(path);
    }
  });
});

describe("validation: FastAPI's 422 shape, and nothing changes", () => {
  const cases: [string, unknown, { loc: (string | number)[]; type: string }][] = [
    ["missing query", {}, { loc: ["body", "query"], type: "missing" }],
    ["non-string query", { query: 42 }, { loc: ["body", "query"], type: "string_type" }],
    ["empty query", { query: "" }, { loc: ["body", "query"], type: "string_too_short" }],
    ["100 KB query", { query: "x".repeat(100_000) }, { loc: ["body", "query"], type: "string_too_long" }],
  ];
  for (const path of [
    "/search/local",
    "/search/global",
    "/search/local/stream",
    "/search/global/stream",
    "/generate_questions",
  ]) {
    test(`${path}`, async () => {
      for (const [name, body, expected] of cases) {
        const res = await t.json<{ detail: { loc: unknown[]; msg: string; type: string }[] }>(
          path,
          postJson(body),
        );
        expect({ name, status: res.status }).toEqual({ name, status: 422 });
        expect(res.body.detail).toHaveLength(1);
        expect(res.body.detail[0]).toMatchObject(expected);
        expect(typeof res.body.detail[0]?.msg).toBe("string");
        expect(Object.keys(res.body.detail[0] ?? {}).sort()).toEqual(["loc", "msg", "type"]);
      }
      const long = await t.json<{ detail: { msg: string }[] }>(
        path,
        postJson({ query: "x".repeat(100_000) }),
      );
      expect(long.body.detail[0]?.msg).toBe("String should have at most 8000 characters");
      const malformed = await t.json<{ detail: { type: string }[] }>(path, postJson("{not json"));
      expect(malformed.status).toBe(422);
      expect(malformed.body.detail[0]?.type).toBe("json_invalid");
    });
  }

  test("an unknown model is a 422 on body.model", async () => {
    const res = await t.json<{ detail: { loc: unknown[] }[] }>(
      "/search/local",
      postJson({ query: "Scrooge", model: "nope/nothing" }),
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]?.loc).toEqual(["body", "model"]);
  });

  test("rejected indexing requests change nothing", async () => {
    const before = await t.json<{ indexes: unknown[] }>("/search/indexes");
    const res = await t.request("/search/index", postJson({ name: "fresh", documents: [] }));
    expect(res.status).toBe(422);
    expect((await t.json<{ indexes: unknown[] }>("/search/indexes")).body).toEqual(before.body);
  });
});

describe("owner scoping in protected mode", () => {
  test("one user's index is invisible to another", async () => {
    const p = await createTestApp(twoUsers());
    try {
      const as = (who: string) => asUser(who);
      await p.ctx.database.run(
        "INSERT INTO users (id, display_name) VALUES ('alice', 'Alice'), ('bob', 'Bob')",
      );
      const built = await p.request(
        "/search/index",
        postJson({ documents: documents.slice(0, 1) }, as("alice")),
      );
      expect(built.status).toBe(200);
      const alice = await p.json<SearchBody>(
        "/search/local",
        postJson({ query: "Who is Jacob Marley?" }, as("alice")),
      );
      expect(alice.body.context_data.entities?.length).toBeGreaterThan(0);
      const bob = await p.json<SearchBody>(
        "/search/local",
        postJson({ query: "Who is Jacob Marley?" }, as("bob")),
      );
      expect(bob.status).toBe(200);
      expect(bob.body.response).toContain("has been built yet");
      expect(
        (await p.json<{ indexes: unknown[] }>("/search/indexes", { headers: as("bob") })).body.indexes,
      ).toEqual([]);
      expect((await p.request("/search/local", postJson({ query: "x" }))).status).toBe(401);
    } finally {
      await p.close();
    }
  });
});
