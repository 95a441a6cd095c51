/**
 * GraphRAG's steps with a model, over the real wire: the app reaches a scripted OpenAI-compatible server
 * on a local port (the catalog's Ollama provider) for entity and relationship extraction with gleaning,
 * community reports, global map and reduce, and local answers from the context tables; and a model that
 * fails midway, while indexing and while an answer streams.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { COMPLETE, GLEAN_PROMPT, RECORD, TUPLE } from "../../server/search/indexing/extract-model.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { readChunks } from "../helpers/streams.ts";
import { fixtureDocuments } from "./fixtures.ts";
import { type ChatRequest, type FakeServer, type Reply, startFakeOpenAi } from "./openai-fake.ts";

const MODEL = "ollama/scripted";
const CAST: [string, RegExp][] = [
  ["SCROOGE", /Scrooge/],
  ["BOB CRATCHIT", /Bob Cratchit|Bob\b/],
  ["TINY TIM", /Tiny Tim/],
  ["JACOB MARLEY", /Marley/],
  ["FRED", /\bFred\b/],
];

type Kind = "extract" | "glean" | "report" | "map" | "reduce" | "local" | "other";
const calls: Record<Kind, number> = {
  extract: 0,
  glean: 0,
  report: 0,
  map: 0,
  reduce: 0,
  local: 0,
  other: 0,
};
/** A test sets this to make the model fail on some request. */
let failure: ((kind: Kind, text: string) => Reply | undefined) | undefined;

function kindOf(request: ChatRequest, text: string): Kind {
  const last = request.messages.at(-1)?.content;
  if (text.includes("You build a knowledge graph")) return last === GLEAN_PROMPT ? "glean" : "extract";
  if (text.includes("You write a report about one community")) return "report";
  if (text.includes("List the key points in the reports")) return "map";
  if (text.includes("combining the reports of several analysts")) return "reduce";
  if (text.includes("answering questions about the data in the tables")) return "local";
  return "other";
}

const record = (...fields: (string | number)[]) =>
  `(${fields.map((f, i) => (i === 0 ? `"${f}"` : f)).join(TUPLE)})`;

/** The scripted model: answers each GraphRAG prompt from what the prompt carries. */
function reply(request: ChatRequest, text: string): Reply {
  const kind = kindOf(request, text);
  calls[kind]++;
  const failed = failure?.(kind, text);
  if (failed) return failed;
  const unit = text.match(/Text:\n([\s\S]*?)\n\nRecords:/)?.[1] ?? "";
  if (kind === "extract") {
    const present = CAST.filter(([, pattern]) => pattern.test(unit)).map(([name]) => name);
    const records = present.map((name) =>
      record("entity", name, "person", `${name} appears in this passage`),
    );
    for (let i = 1; i < present.length; i++)
      records.push(record("relationship", present[0] as string, present[i] as string, "share a scene", 5));
    return { text: `${records.join(RECORD)}${COMPLETE}` };
  }
  if (kind === "glean") {
    // Gleaning finds what the first pass missed: Topper, only ever seen through this second round.
    return /Topper/.test(unit) && /Scrooge/.test(unit)
      ? {
          text: `${record("entity", "TOPPER", "person", "a guest at Fred's")}${RECORD}${record("relationship", "TOPPER", "SCROOGE", "at the same party", 3)}${COMPLETE}`,
        }
      : { text: COMPLETE };
  }
  if (kind === "report") {
    const names = [...text.matchAll(/^\d+,([A-Z][A-Z .]+),person,/gm)].map((m) => m[1] as string).sort();
    return {
      text: JSON.stringify({
        title: `The circle of ${names.join(" and ") || "nobody"}`,
        summary: `${names.join(", ")} appear together.`,
        rating: names.length,
        rating_explanation: "more members, more weight",
        findings: [
          {
            summary: `${names[0]} leads`,
            explanation: `${names[0]} ties the group together [Data: Entities (0)]`,
          },
        ],
      }),
    };
  }
  if (kind === "map") {
    const ids = [...text.matchAll(/^(\d+)\|The circle of ([A-Za-z .]+)\|/gm)].map((m) => ({
      id: m[1],
      who: m[2],
    }));
    return {
      text: JSON.stringify({
        points: ids.map(({ id, who }) => ({
          description: `${who} keeps the circle together [Data: Reports (${id})]`,
          score: who?.includes("SCROOGE") ? 90 : 40,
        })),
      }),
    };
  }
  if (kind === "reduce") {
    const best = text.match(/Importance Score: \d+\n(.*)/)?.[1] ?? "nothing";
    return { text: `In short: ${best}` };
  }
  if (kind === "local") {
    const first = text.match(
      /-----Entities-----\nid\|entity\|description\|number of relationships\n\d+\|([^|]+)\|/,
    )?.[1];
    return { text: `The tables say ${first ?? "nothing"} is the one to know.` };
  }
  return { text: "?" };
}

let fake: FakeServer;
let t: TestApp;
beforeAll(async () => {
  fake = startFakeOpenAi({ reply });
  t = await createTestApp({ env: { OLLAMA_BASE_URL: fake.url } });
});
afterAll(async () => {
  await t.close();
  await fake.stop();
});

const documents = fixtureDocuments().map((d) => ({ name: d.title, text: d.text }));

describe("indexing with a model over the wire", () => {
  test("a model failing midway fails the run with a 503; finished documents stay, and a re-run completes", async () => {
    // Stave three's units reach the model after stave one's are stored: fail on its first.
    failure = (kind, text) =>
      kind === "extract" && text.includes("STAVE THREE")
        ? { status: 500, message: "the GPU caught fire" }
        : undefined;
    const failed = await t.json<{ detail: string }>(
      "/search/index",
      postJson({ name: "carol", model: MODEL, documents }),
    );
    expect(failed.status).toBe(503);
    expect(failed.body.detail).toContain("the GPU caught fire");
    const listed = await t.json<{ indexes: { name: string; documents: number }[] }>("/search/indexes");
    expect(listed.body.indexes.find((i) => i.name === "carol")?.documents).toBe(1);

    failure = undefined;
    for (const kind of Object.keys(calls) as Kind[]) calls[kind] = 0;
    const built = await t.json<{
      documents_indexed: number;
      documents_unchanged: number;
      units: number;
      reports: number;
      entities: number;
    }>("/search/index", postJson({ name: "carol", model: MODEL, documents }));
    expect(built.status).toBe(200);
    expect(built.body).toMatchObject({ documents_indexed: 1, documents_unchanged: 1 });
    // Only stave three's units were extracted again, each with one gleaning round; one report per community.
    expect(calls.extract).toBeGreaterThan(0);
    expect(calls.extract).toBeLessThan(built.body.units);
    expect(calls.glean).toBe(calls.extract);
    expect(calls.report).toBe(built.body.reports);
    const request = fake.chats.find((c) => kindOf(c.request, c.text) === "extract")?.request;
    expect(request?.model).toBe("scripted");
    expect(request?.stream).toBe(true);
  });

  test("what gleaning found is in the graph", async () => {
    const { body } = await t.json<{ context_data: { entities: { entity: string }[] } }>(
      "/search/local",
      postJson({ query: "Who is Topper?", index: "carol" }),
    );
    expect(body.context_data.entities.map((e) => e.entity)).toContain("TOPPER");
  });
});

describe("answering with a model over the wire", () => {
  test("global: the map sees the reports, the reduce sees the scored points, the answer streams back", async () => {
    for (const kind of Object.keys(calls) as Kind[]) calls[kind] = 0;
    const { status, body } = await t.json<{
      response: string;
      context_data: { points: { score: number }[] };
    }>("/search/global", postJson({ query: "Who holds the story together?", index: "carol", model: MODEL }));
    expect(status).toBe(200);
    expect(calls.map).toBeGreaterThan(0);
    expect(calls.reduce).toBe(1);
    expect(body.response).toMatch(
      /^In short: [A-Za-z .]*SCROOGE[A-Za-z .]* keeps the circle together \[Data: Reports \(\d+\)\]$/,
    );
    expect(body.context_data.points[0]?.score).toBe(90);
    const reduce = fake.chats.filter((c) => kindOf(c.request, c.text) === "reduce").at(-1);
    expect(reduce?.text).toContain("----Analyst 1----");
  });

  test("local: the model answers from the context tables it was sent", async () => {
    const { body } = await t.json<{ response: string }>(
      "/search/local",
      postJson({ query: "Tell me about Tiny Tim", index: "carol", model: MODEL }),
    );
    expect(body.response).toBe("The tables say TINY TIM is the one to know.");
    const sent = fake.chats.filter((c) => kindOf(c.request, c.text) === "local").at(-1)?.text ?? "";
    for (const table of ["-----Entities-----", "-----Relationships-----", "-----Sources-----"])
      expect(sent).toContain(table);
  });

  test("a model that dies mid-answer: 503 on the plain route, an error event after the deltas on the stream", async () => {
    failure = (kind) =>
      kind === "reduce" ? { pieces: ["In short: SCROOGE ", "keeps "], thenBreak: true } : undefined;
    try {
      const plain = await t.json<{ detail: string }>(
        "/search/global",
        postJson({ query: "Who holds the story together?", index: "carol", model: MODEL }),
      );
      expect(plain.status).toBe(503);
      expect(typeof plain.body.detail).toBe("string");

      const server = listen(t);
      try {
        const response = await fetch(
          `${server.url}/search/global/stream`,
          postJson({ query: "Who holds the story together?", index: "carol", model: MODEL }),
        );
        const events: string[] = [];
        const deltas: string[] = [];
        for await (const frame of readChunks(response.body as ReadableStream<Uint8Array>, "\n\n")) {
          const event = frame.match(/^event: (.*)$/m)?.[1];
          const data = frame.match(/^data: (.*)$/m)?.[1];
          if (!event || !data) continue;
          events.push(event);
          if (event === "delta") deltas.push((JSON.parse(data) as { text: string }).text);
        }
        expect(events[0]).toBe("context");
        expect(events.at(-1)).toBe("error");
        expect(events).not.toContain("done");
        expect(deltas.join("")).toStartWith("In short: SCROOGE");
      } finally {
        await server.stop();
      }
    } finally {
      failure = undefined;
    }
  });
});
