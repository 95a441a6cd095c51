/**
 * The model-driven paths with scripted models (pi-ai's faux provider): the extraction record parser and
 * its gleaning loop, model-written reports, local answers from the context tables, global map-reduce
 * prompts and their streaming reduce, and model-written follow-up questions.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Context, type FauxResponseFactory, fauxAssistantMessage } from "@mariozechner/pi-ai";
import fc from "fast-check";
import {
  COMPLETE,
  CONTINUE_PROMPT,
  extractWithModel,
  GLEAN_PROMPT,
  parseRecords,
  RECORD,
  TUPLE,
} from "../../server/search/indexing/extract-model.ts";
import { parseReport } from "../../server/search/indexing/reports.ts";
import { parsePoints } from "../../server/search/services/global.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scriptedModel } from "../helpers/faux.ts";
import { listen } from "../helpers/listen.ts";
import { readChunks } from "../helpers/streams.ts";

const NO_ANSWER = "I am sorry but I am unable to answer this question given the provided data.";

const text = (context: Context) =>
  context.messages
    .map((m) =>
      typeof m.content === "string" ? m.content : m.content.map((p) => ("text" in p ? p.text : "")).join(""),
    )
    .join("\n");
const lastUser = (context: Context) => {
  const m = [...context.messages].reverse().find((x) => x.role === "user");
  return typeof m?.content === "string" ? m.content : "";
};
const repeat = (factory: FauxResponseFactory, n = 200) => Array.from({ length: n }, () => factory);

describe("the extraction record parser", () => {
  test("reads entities and relationships and skips malformed records", () => {
    const output = [
      `("entity"${TUPLE}ebenezer scrooge${TUPLE}PERSON${TUPLE}A miser who runs a counting-house)`,
      `("entity"${TUPLE}LONDON${TUPLE}geo${TUPLE}The city)`,
      `("relationship"${TUPLE}EBENEZER SCROOGE${TUPLE}JACOB MARLEY${TUPLE}Former business partners${TUPLE}9)`,
      `("relationship"${TUPLE}A${TUPLE}B${TUPLE}no strength${TUPLE}strong)`,
      `("entity"${TUPLE}broken)`,
      "not a record at all",
    ].join(`${RECORD}\n`);
    const parsed = parseRecords(
      `${output}\n${COMPLETE}\n("entity"${TUPLE}AFTER${TUPLE}person${TUPLE}ignored)`,
    );
    expect(parsed.entities).toEqual([
      { name: "EBENEZER SCROOGE", type: "person", description: "A miser who runs a counting-house" },
      { name: "LONDON", type: "geo", description: "The city" },
    ]);
    expect(parsed.relationships).toEqual([
      {
        source: "EBENEZER SCROOGE",
        target: "JACOB MARLEY",
        description: "Former business partners",
        weight: 9,
      },
      { source: "A", target: "B", description: "no strength", weight: 1 },
    ]);
  });

  test("never throws, and reads back any well-formed records it is given", () => {
    fc.assert(fc.property(fc.string(), (s) => void parseRecords(s)));
    const word = fc.stringMatching(/^[A-Z][A-Z ]{0,12}[A-Z]$/);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(word, fc.constantFrom("person", "geo"), fc.stringMatching(/^[a-z ,.]{1,30}$/)), {
          maxLength: 8,
        }),
        (items) => {
          const out = items.map(([n, t, d]) => `("entity"${TUPLE}${n}${TUPLE}${t}${TUPLE}${d})`).join(RECORD);
          const parsed = parseRecords(`${out}${COMPLETE}`);
          expect(parsed.entities.map((e) => e.name)).toEqual(
            items.map(([n]) => n.replace(/\s+/g, " ").trim()),
          );
        },
      ),
    );
  });

  test("report and map replies are parsed, or rejected when not the shape", () => {
    expect(
      parseReport(
        'Here: {"title":"T","summary":"S","rating":12,"rating_explanation":"R","findings":[{"summary":"a","explanation":"b"},{"x":1}]}',
      ),
    ).toEqual({
      title: "T",
      summary: "S",
      rating: 10,
      rating_explanation: "R",
      findings: [{ summary: "a", explanation: "b" }],
    });
    expect(parseReport("no json")).toBeUndefined();
    expect(
      parsePoints('```json\n{"points":[{"description":"d","score":150},{"description":3,"score":1}]}\n```'),
    ).toEqual([{ description: "d", score: 100, reports: [] }]);
    expect(parsePoints("nothing")).toEqual([]);
  });
});

describe("with a scripted model", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  test("gleaning is bounded and stops when the model says N", async () => {
    const prompts: string[] = [];
    const replies = [
      `("entity"${TUPLE}ADA${TUPLE}person${TUPLE}a mathematician)${COMPLETE}`,
      `("entity"${TUPLE}BABBAGE${TUPLE}person${TUPLE}an engineer)${RECORD}("relationship"${TUPLE}ADA${TUPLE}BABBAGE${TUPLE}worked together${TUPLE}8)${COMPLETE}`,
      "N",
      "should never be asked",
    ];
    const model = scriptedModel(
      t.ctx.models,
      replies.map((reply) => (context: Context) => {
        prompts.push(lastUser(context));
        return fauxAssistantMessage(reply);
      }),
    );
    try {
      const extraction = await extractWithModel("Ada worked with Babbage.", {
        models: t.ctx.models,
        model: await t.ctx.models.resolve(model.id),
        maxGleanings: 3,
      });
      expect(prompts).toHaveLength(3);
      expect(prompts[0]).toContain("Ada worked with Babbage.");
      expect(prompts[0]).toContain(TUPLE);
      expect(prompts[1]).toBe(GLEAN_PROMPT);
      expect(prompts[2]).toBe(CONTINUE_PROMPT);
      expect(extraction.entities.map((e) => e.name)).toEqual(["ADA", "BABBAGE"]);
      expect(extraction.relationships).toEqual([
        { source: "ADA", target: "BABBAGE", description: "worked together", weight: 8 },
      ]);
      expect(model.registration.getPendingResponseCount()).toBe(1);
    } finally {
      model.dispose();
    }
  });

  test("model-driven indexing, reports, and local, global and question answers", async () => {
    const calls = { extract: 0, report: 0, map: 0, reduce: 0, local: 0, questions: 0 };
    const mapPrompts: string[] = [];
    let reducePrompt = "";
    let localPrompt = "";
    const model = scriptedModel(
      t.ctx.models,
      repeat((context) => {
        const all = `${context.systemPrompt ?? ""}\n${text(context)}`;
        if (all.includes("You build a knowledge graph")) {
          if (lastUser(context) === GLEAN_PROMPT) return fauxAssistantMessage(COMPLETE);
          calls.extract++;
          const records = [`("entity"${TUPLE}ADA LOVELACE${TUPLE}person${TUPLE}Wrote the first program)`];
          records.push(
            `("entity"${TUPLE}CHARLES BABBAGE${TUPLE}person${TUPLE}Designed the Analytical Engine)`,
          );
          records.push(`("entity"${TUPLE}LONDON${TUPLE}geo${TUPLE}Where they met)`);
          records.push(
            `("relationship"${TUPLE}ADA LOVELACE${TUPLE}CHARLES BABBAGE${TUPLE}Collaborators on the engine${TUPLE}9)`,
          );
          records.push(`("relationship"${TUPLE}ADA LOVELACE${TUPLE}LONDON${TUPLE}Lived in London${TUPLE}4)`);
          return fauxAssistantMessage(`${records.join(RECORD)}${COMPLETE}`);
        }
        if (all.includes("You write a report about one community")) {
          calls.report++;
          return fauxAssistantMessage(
            JSON.stringify({
              title: "Lovelace and Babbage's engine",
              summary: "Two collaborators in London.",
              rating: 8,
              rating_explanation: "Central to the text.",
              findings: [
                {
                  summary: "The first program",
                  explanation: "Ada wrote it for the engine. [Data: Entities (0)]",
                },
              ],
            }),
          );
        }
        if (all.includes("List the key points in the reports")) {
          calls.map++;
          mapPrompts.push(context.systemPrompt ?? "");
          return fauxAssistantMessage(
            JSON.stringify({
              points: [
                { description: "Ada wrote the first program [Data: Reports (0)]", score: 90 },
                { description: "They met in London [Data: Reports (0)]", score: 40 },
                { description: "Irrelevant", score: 0 },
              ],
            }),
          );
        }
        if (all.includes("combining the reports of several analysts")) {
          calls.reduce++;
          reducePrompt = context.systemPrompt ?? "";
          return fauxAssistantMessage(
            "Ada Lovelace wrote the first program with Babbage [Data: Reports (0)].",
          );
        }
        if (all.includes("suggesting follow-up questions")) {
          calls.questions++;
          return fauxAssistantMessage(
            "- Who was Ada Lovelace?\n- What did Babbage design?\n2. Where is London?\nnot a question",
          );
        }
        calls.local++;
        localPrompt = context.systemPrompt ?? "";
        return fauxAssistantMessage(
          "Ada Lovelace collaborated with Charles Babbage [Data: Entities (0); Relationships (0)].",
        );
      }),
    );
    try {
      const built = await t.json<Record<string, unknown>>(
        "/search/index",
        postJson({
          name: "engines",
          model: model.id,
          documents: [
            {
              name: "ada.md",
              text: "Ada Lovelace met Charles Babbage in London. She wrote the first program.",
            },
          ],
        }),
      );
      expect(built.status).toBe(200);
      expect(built.body).toMatchObject({ entities: 3, relationships: 2, communities: 1, reports: 1 });
      expect(calls.extract).toBe(1);
      expect(calls.report).toBe(1);

      const local = await t.json<{
        response: string;
        context_data: Record<string, Record<string, unknown>[]>;
      }>("/search/local", postJson({ query: "Who was Ada Lovelace?", index: "engines", model: model.id }));
      expect(local.body.response).toBe(
        "Ada Lovelace collaborated with Charles Babbage [Data: Entities (0); Relationships (0)].",
      );
      expect(localPrompt).toContain("-----Entities-----");
      expect(localPrompt).toContain("ADA LOVELACE|Wrote the first program");
      expect(localPrompt).toContain("-----Reports-----");
      expect(localPrompt).toContain("Lovelace and Babbage's engine");
      expect(local.body.context_data.reports?.[0]?.title).toBe("Lovelace and Babbage's engine");

      const global = await t.json<{
        response: string;
        context_data: Record<string, Record<string, unknown>[]>;
      }>(
        "/search/global",
        postJson({ query: "What is the dataset about?", index: "engines", model: model.id }),
      );
      expect(global.body.response).toBe(
        "Ada Lovelace wrote the first program with Babbage [Data: Reports (0)].",
      );
      expect(mapPrompts[0]).toContain("Lovelace and Babbage's engine");
      expect(mapPrompts[0]).toContain("Two collaborators in London.");
      // Reduce sees the scored points best first, without the zero-scored one.
      expect(reducePrompt.indexOf("Importance Score: 90")).toBeGreaterThan(-1);
      expect(reducePrompt.indexOf("Importance Score: 90")).toBeLessThan(
        reducePrompt.indexOf("Importance Score: 40"),
      );
      expect(reducePrompt).not.toContain("Irrelevant");
      expect(global.body.context_data.points?.map((p) => p.score)).toEqual([90, 40]);

      // The stream carries the model's own tokens.
      const server = listen(t);
      try {
        const response = await fetch(
          `${server.url}/search/global/stream`,
          postJson({ query: "What is the dataset about?", index: "engines", model: model.id }),
        );
        const frames: { event?: string; data?: string }[] = [];
        for await (const f of readChunks(response.body as ReadableStream<Uint8Array>, "\n\n"))
          frames.push({ event: f.match(/^event: (.*)$/m)?.[1], data: f.match(/^data: (.*)$/m)?.[1] });
        const deltas = frames
          .filter((f) => f.event === "delta")
          .map((f) => JSON.parse(f.data as string).text as string);
        expect(frames[0]?.event).toBe("context");
        expect(deltas.length).toBeGreaterThan(1);
        expect(deltas.join("")).toBe(
          "Ada Lovelace wrote the first program with Babbage [Data: Reports (0)].",
        );
        expect(JSON.parse(frames.at(-1)?.data as string)).toEqual({ response: deltas.join("") });
      } finally {
        await server.stop();
      }

      const questions = await t.json<{ questions: string[] }>(
        "/generate_questions",
        postJson({ query: "Ada Lovelace", index: "engines", model: model.id }),
      );
      expect(questions.body.questions).toEqual([
        "Who was Ada Lovelace?",
        "What did Babbage design?",
        "Where is London?",
      ]);

      // Re-indexing the same document with the model does no work and calls nobody.
      const before = { ...calls };
      await t.json(
        "/search/index",
        postJson({
          name: "engines",
          model: model.id,
          documents: [
            {
              name: "ada.md",
              text: "Ada Lovelace met Charles Babbage in London. She wrote the first program.",
            },
          ],
        }),
      );
      expect(calls).toEqual(before);
    } finally {
      model.dispose();
    }
  });

  test("when every map point scores 0 the answer is the fixed message and reduce is never asked", async () => {
    await t.json(
      "/search/index",
      postJson({
        name: "zero",
        documents: [
          {
            name: "z.txt",
            text: "Ada Lovelace met Charles Babbage in London. Ada Lovelace wrote to Charles Babbage often.",
          },
        ],
      }),
    );
    let reduced = false;
    const model = scriptedModel(
      t.ctx.models,
      repeat((context) => {
        if ((context.systemPrompt ?? "").includes("combining the reports")) reduced = true;
        return fauxAssistantMessage(JSON.stringify({ points: [{ description: NO_ANSWER, score: 0 }] }));
      }),
    );
    try {
      const res = await t.json<{ response: string }>(
        "/search/global",
        postJson({ query: "What about whales?", index: "zero", model: model.id }),
      );
      expect(res.status).toBe(200);
      expect(res.body.response).toBe(NO_ANSWER);
      expect(reduced).toBe(false);
    } finally {
      model.dispose();
    }
  });

  test("a model failing mid-answer is a 503 {detail}, and an error event in a stream", async () => {
    await t.json(
      "/search/index",
      postJson({
        name: "fail",
        documents: [
          {
            name: "f.txt",
            text: "Ada Lovelace met Charles Babbage in London. Ada Lovelace wrote to Charles Babbage often.",
          },
        ],
      }),
    );
    const model = scriptedModel(
      t.ctx.models,
      repeat(() => fauxAssistantMessage("", { stopReason: "error", errorMessage: "provider exploded" })),
    );
    try {
      const res = await t.json<{ detail: string }>(
        "/search/local",
        postJson({ query: "Ada Lovelace", index: "fail", model: model.id }),
      );
      expect(res.status).toBe(503);
      expect(res.body.detail).toContain("provider exploded");
      const stream = await t.request(
        "/search/local/stream",
        postJson({ query: "Ada Lovelace", index: "fail", model: model.id }),
      );
      const body = await stream.text();
      expect(body).toStartWith("event: context");
      expect(body).toContain("event: error");
      expect(body).toContain("provider exploded");
      expect(body).not.toContain("event: done");
    } finally {
      model.dispose();
    }
  });
});
