/**
 * Offline answers a person would read, over HTTP on the committed staves of A Christmas Carol: broad
 * global questions answered from the top-level communities (naming the characters, with report
 * citations that are in context), specific global questions opening with a fact, local answers opening
 * with the sentence that best answers the question, and entities typed and merged as a reader would.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { extractOffline, profileDocument } from "../../server/search/indexing/extract-offline.ts";
import { mergeGraph } from "../../server/search/indexing/merge.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scoreEntities } from "./entity-labels.ts";
import { fixtureDocuments } from "./fixtures.ts";

type Row = Record<string, string | number | boolean>;
interface SearchBody {
  response: string;
  context_data: Record<string, Row[]>;
}

const NO_ANSWER = "I am sorry but I am unable to answer this question given the provided data.";
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
  const documents = fixtureDocuments().map((d) => ({ name: d.title, text: d.text }));
  expect((await t.request("/search/index", postJson({ documents }))).status).toBe(200);
});
afterAll(() => t.close());

const ask = async (path: string, query: string) => {
  const { status, body } = await t.json<SearchBody>(path, postJson({ query }));
  expect(status).toBe(200);
  return body;
};
/** Every report the answer cites is a report of the context marked in context. */
const expectCitedInContext = (body: SearchBody) => {
  const cited = [...body.response.matchAll(/Reports \(([\d, ]+)/g)].flatMap((m) =>
    (m[1] as string).split(", ").filter(Boolean),
  );
  expect(cited.length).toBeGreaterThan(0);
  const inContext = new Set((body.context_data.reports ?? []).filter((r) => r.in_context).map((r) => r.id));
  for (const id of cited) expect(inContext.has(id)).toBe(true);
};

describe("global search offline answers broad questions from the top-level communities", () => {
  for (const query of [
    "What are the main themes?",
    "Who are the main characters?",
    "What is this story about?",
  ]) {
    test(query, async () => {
      const body = await ask("/search/global", query);
      expect(body.response).not.toBe(NO_ANSWER);
      expect(body.response).toContain("Scrooge");
      expect(body.response).toContain("Bob Cratchit");
      expect((body.context_data.points ?? []).length).toBeGreaterThan(0);
      expectCitedInContext(body);
    });
  }

  test("the main characters are people, most mentioned first, and each is described", async () => {
    const body = await ask("/search/global", "Who are the main characters?");
    const opening = body.response.split("\n")[0] as string;
    const named = opening.match(/^The main characters are (.*?) \[Data:/)?.[1] ?? "";
    expect(named.split(/, | and /)[0]).toBe("Scrooge");
    expect(named).toContain("Jacob Marley");
    for (const word of ["Christmas", "Present", "Past", "Future"])
      expect(named.split(/, | and /)).not.toContain(word);
    expect(body.response).toMatch(/^- Scrooge: .+ \[Data: Entities \(\d+\)\]$/m);
  });

  test("a specific question opens with a fact from the text that bears on it", async () => {
    const body = await ask("/search/global", "What does Scrooge think of Christmas?");
    const opening = body.response.split("\n")[0] as string;
    expect(opening).toContain("Scrooge");
    expect(opening).toMatch(/Christmas/);
    // What Scrooge says of it, not his nephew ("'Christmas a humbug, uncle!' said Scrooge's nephew.").
    expect(opening).toMatch(/said Scrooge(?!['’]s)\b/);
    // The sentence is the book's, cited to the source that holds it (and to any report that repeats it).
    const source = opening.match(
      /\[Data: Sources \((\d+)[\d, +more]*\)(?:; Reports \([\d, +more]+\))?\]$/,
    )?.[1];
    const held = (body.context_data.sources ?? []).find((s) => s.id === source);
    expect(String(held?.text).replace(/\s+/g, " ")).toContain(
      opening.replace(/ \[Data:.*$/, "").slice(0, 60),
    );
    expectCitedInContext(body);
  });

  test("a question nothing relates to still gets the fixed message", async () => {
    expect((await ask("/search/global", "quantum chromodynamics")).response).toBe(NO_ANSWER);
  });
});

describe("local search offline opens with the sentence that best answers the question", () => {
  test("where: a sentence about the subject's home, not the first name that matched", async () => {
    const body = await ask("/search/local", "Where does Bob Cratchit live?");
    const opening = body.response.split("\n")[0] as string;
    expect(opening).toMatch(/Bob/);
    expect(opening).toMatch(/house|home|dwelling|Camden Town/);
    expect(opening).not.toMatch(/^\w+ \(person\):/);
    expect(body.context_data.entities?.[0]?.entity).toBe("Bob Cratchit");
    // Then the subject and its strongest ties, with relationship citations.
    expect(body.response).toMatch(
      /^Bob Cratchit \(person\) \[Data: Entities \(\d+\)\] is most closely tied to .+ \[Data: Relationships \([\d, ]+\)\]\.$/m,
    );
  });

  test("who: the subject the query names comes first, before an entity that only contains its name", async () => {
    const body = await ask("/search/local", "Who is Jacob Marley?");
    expect(body.context_data.entities?.[0]?.entity).toBe("Jacob Marley");
    expect(body.response.split("\n")[0] as string).toContain("Jacob Marley");
  });

  test("the opening's citations are in-context sources", async () => {
    const body = await ask("/search/local", "Where does Bob Cratchit live?");
    const source = (body.response.split("\n")[0] as string).match(/Sources \((\d+)\)/)?.[1];
    const inContext = new Set((body.context_data.sources ?? []).filter((s) => s.in_context).map((s) => s.id));
    expect(inContext.has(source as string)).toBe(true);
  });
});

describe("entities offline", () => {
  test("person/place/organisation F1 on the hand-labelled set is at least 0.8", async () => {
    const { body } = await t.json<{ indexes: { name: string }[] }>("/search/indexes");
    expect(body.indexes.map((i) => i.name)).toContain("default");
    const entities = await t.ctx.database.all<{ name: string; type: string }>(
      "SELECT name, type FROM search_entities",
    );
    const score = scoreEntities(entities);
    expect({ f1: score.f1 >= 0.8, wrong: score.wrong, missed: score.missed }).toMatchObject({ f1: true });
  });

  test("aliases, honorifics and possessives are one entity; ordinary capitalised words are no one", () => {
    const text = fixtureDocuments()
      .map((d) => d.text)
      .join("\n\n");
    const profile = profileDocument(text);
    const extraction = extractOffline(text, profile);
    const records = [
      ...extraction.entities.map((e) => ({
        unit_id: 1,
        kind: "entity" as const,
        name: e.name,
        target: null,
        type: e.type,
        description: e.description,
        weight: e.mentions ?? 1,
      })),
    ];
    const merged = mergeGraph(records, 2);
    const names = merged.entities.map((e) => e.name);
    // "Scrooge", "Mr. Scrooge", "Uncle Scrooge", "Scrooge's": one entity.
    expect(names.filter((n) => /Scrooge/.test(n))).toEqual(["Scrooge"]);
    expect(names.filter((n) => /Marley/.test(n))).toEqual(["Jacob Marley"]);
    const typeOf = (name: string) => merged.entities.find((e) => e.name === name)?.type;
    expect(typeOf("Christmas")).toBe("event");
    expect(typeOf("Ghost of Christmas Present")).toBe("person");
    for (const word of ["Present", "Past", "Future", "Good", "Old", "Illustration", "God", "Bah", "Humbug"])
      expect(names).not.toContain(word);
  });

  test("head words and cues type what a name names", () => {
    // Our own sentences (not from any book): a newspaper, a city, a printer, a merchant.
    const text = [
      "Benjamin Franklin bought the Pennsylvania Gazette in 1729.",
      "The Pennsylvania Gazette was printed in Philadelphia every week, said Franklin.",
      "Franklin walked through Philadelphia with Mr. Denham, who had come from London.",
      "In London, Mr. Denham kept a shop near Fleet Street, and Franklin worked for him.",
      "The Junto met on Fridays in Philadelphia; Franklin said the Gazette paid its way.",
    ].join(" ");
    const { types } = profileDocument(text);
    expect(types.get("PENNSYLVANIA GAZETTE")).toBe("organization");
    expect(types.get("PHILADELPHIA")).toBe("geo");
    expect(types.get("LONDON")).toBe("geo");
    expect(types.get("FLEET STREET")).toBe("geo");
    expect(types.get("FRANKLIN")).toBe("person");
    expect(types.get("MR. DENHAM")).toBe("person");
  });

  test("a form of address said alone is no one, and a day or month before a name is not part of it", () => {
    // Our own sentences: "Sir" and "Madame" as a speaker says them; days and months opening a sentence.
    const text = [
      '"Sir," said Walter Pell, "I will not sell the mare." "Sir, you must," said Harrow.',
      '"Madame, the carriage," said Josef. "Thank you, Madame," said Nora Lennox.',
      "On Saturday Pell drove to Fenwick. In October Nora Lennox sold the farm to Harrow.",
      "On Saturday Harrow came back, and on Monday Walter Pell paid him at Easter Monday's fair.",
      "Sir Thomas Lennox, her father, said Harrow was honest. Christmas Eve found them all at Fenwick.",
    ].join(" ");
    const { types } = profileDocument(text);
    for (const word of ["SIR", "MADAME", "SATURDAY PELL", "OCTOBER NORA LENNOX"])
      expect(types.has(word)).toBe(false);
    expect(types.get("SIR THOMAS LENNOX")).toBe("person");
    expect(types.get("NORA LENNOX")).toBe("person");
    expect(types.get("CHRISTMAS EVE")).toBe("event");
  });
});
