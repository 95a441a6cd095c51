/**
 * Offline answers quote the book as it is written (issue 31, item 2), on the whole of A Christmas Carol
 * indexed over HTTP: units open at a word (no "Mast… ister to his stool"), every sentence of a
 * description, report or answer starts where a word of the book starts and a clipped one ends on a
 * whole word, no answer says a sentence twice, a sentence cited to Sources is in the cited source, and
 * "What did the Cratchits have for dinner?" opens with the dinner, not with Martha hiding.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { splitUnits } from "../../server/search/indexing/units.ts";
import { sentences, stripCaptions } from "../../server/search/text.ts";
import { createTestApp, postJson, REPO_ROOT, type TestApp } from "../helpers/app.ts";

type Row = Record<string, string | number | boolean>;
interface SearchBody {
  response: string;
  context_data: Record<string, Row[]>;
}

const BOOK = readFileSync(join(REPO_ROOT, "tests/fixtures/books/a_christmas_carol.txt"), "utf8");
const FLAT = BOOK.replace(/\s+/g, " ");
const QUESTIONS: [string, string][] = [
  ["global", "What are the main themes?"],
  ["global", "Who are the main characters?"],
  ["global", "What does Scrooge think of Christmas?"],
  ["global", "What did the Cratchits have for dinner?"],
  ["local", "What did the Cratchits have for dinner?"],
  ["local", "Who was Marley?"],
  ["local", "Where does Bob Cratchit live?"],
  ["global", "What happens at the end of the story?"],
];
/** The book's sentences, as the splitter cuts the whole book (not a unit of it). */
const WHOLE = new Set(sentences(stripCaptions(BOOK)).map((s) => s.replace(/\s+/g, " ")));
let t: TestApp;
const answers = new Map<string, SearchBody>();

beforeAll(async () => {
  t = await createTestApp();
  const documents = [{ name: "a_christmas_carol.txt", text: BOOK }];
  expect((await t.request("/search/index", postJson({ documents }))).status).toBe(200);
  for (const [kind, query] of QUESTIONS) {
    const { status, body } = await t.json<SearchBody>(`/search/${kind}`, postJson({ query }));
    expect(status).toBe(200);
    answers.set(`${kind} ${query}`, body);
  }
}, 120_000);
afterAll(() => t.close());

/** The prose of a line: no list marker, label ("Scrooge: "), quotes or citations. */
const prose = (line: string) =>
  line
    .replace(/\s*\[Data:[^\]]*\]/g, "")
    .replace(/^- (?:[^:"]{1,80}: )?/, "")
    .replace(/^"|"$/g, "")
    .trim();

/** Each sentence of a text starts at a word of the book, and one clipped with "…" ends on a whole word. */
function expectQuotedWhole(text: string, where: string) {
  for (const sentence of sentences(text)) {
    const clipped = sentence.match(/(\S+)…$/);
    const head = sentence.replace(/…$/, "").slice(0, 24);
    if (!FLAT.includes(head)) continue; // the answerer's own words ("The main characters are…")
    const starts = [...FLAT.matchAll(new RegExp(head.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g"))];
    expect({
      where,
      sentence,
      atWord: starts.some((m) => !/[A-Za-z]/.test(FLAT[(m.index ?? 0) - 1] ?? " ")),
    }).toEqual({ where, sentence, atWord: true });
    if (clipped) {
      const word = (clipped[1] as string).replace(/^\W+/, "");
      expect({ where, word, whole: new RegExp(`\\b${word}\\b`).test(FLAT) }).toEqual({
        where,
        word,
        whole: true,
      });
    }
  }
}

describe("offline answers quote whole sentences", () => {
  test("a unit after the first opens at a word, never mid-word", () => {
    const units = splitUnits(BOOK, { size: 300, overlap: 50 });
    expect(units.length).toBeGreaterThan(100);
    for (const unit of units.slice(1)) {
      const at = FLAT.indexOf(unit.text.replace(/\s+/g, " ").slice(0, 40));
      expect(at).toBeGreaterThan(0);
      expect({ unit: unit.text.slice(0, 40), before: FLAT[at - 1] }).toEqual({
        unit: unit.text.slice(0, 40),
        before: " ",
      });
    }
  });

  test("in a hard-wrapped book a unit opens at a sentence, not at the line its overlap starts on", () => {
    // The book wraps every line: a unit that opened at the first line start of its overlap opened
    // mid-sentence ("nothing ever happened on this globe…"); half the units did, a third in longer books.
    const units = splitUnits(BOOK).slice(1);
    const afterSentence = units.filter((unit) => {
      const at = FLAT.indexOf(unit.text.replace(/\s+/g, " ").slice(0, 60));
      return /[.!?]["'’”)_]*\s$/.test(FLAT.slice(Math.max(0, at - 4), at));
    });
    expect(afterSentence.length / units.length).toBeGreaterThanOrEqual(0.9);
  });

  test("descriptions and reports in context start at a word and clip at a word", () => {
    for (const [key, body] of answers) {
      for (const e of body.context_data.entities ?? [])
        expectQuotedWhole(String(e.description), `${key}: entity`);
      for (const r of body.context_data.reports ?? [])
        for (const line of String(r.content).split("\n")) expectQuotedWhole(prose(line), `${key}: report`);
    }
  });

  test("answers start sentences at words, never say one twice, and cite a source that holds it", () => {
    for (const [key, body] of answers) {
      const said: string[] = [];
      const sources = new Map((body.context_data.sources ?? []).map((s) => [String(s.id), String(s.text)]));
      for (const line of body.response.split("\n").filter((l) => l.trim())) {
        const text = prose(line);
        expectQuotedWhole(text, key);
        for (const s of sentences(text)) said.push(s.replace(/\W+/g, " ").trim().toLowerCase());
        const cited = line.match(/Sources \(([\d, ]+)/)?.[1];
        if (!cited || line.includes("(person)")) continue;
        const holders = cited.split(", ").map((id) => (sources.get(id) ?? "").replace(/\s+/g, " "));
        const quoted = text.replace(/…$/, "").replace(/^[^:]{1,80}: /, "");
        expect({
          key,
          quoted,
          held: holders.some((h) => h.includes(quoted) || h.includes(text.replace(/…$/, ""))),
        }).toEqual({
          key,
          quoted,
          held: true,
        });
      }
      const twice = said.filter((s, i) => s.length > 20 && said.indexOf(s) !== i);
      expect({ key, twice }).toEqual({ key, twice: [] });
    }
  });

  test("an answer opens with a whole sentence of the book, never the tail a unit opens with", () => {
    // A unit cut at a line of the hard-wrapped book opened with "nothing ever happened on this globe…",
    // which opened the answer about the story's end.
    for (const [key, body] of answers) {
      const opening = prose((body.response.split("\n")[0] ?? "").replace(/^.*The nearest passage is: /, ""));
      const quoted = opening.replace(/^\*\*[^*]+\*\*: /, "");
      if (!FLAT.includes(quoted.slice(0, 24))) continue; // the answerer's own words
      for (const sentence of sentences(quoted))
        expect({ key, sentence, whole: WHOLE.has(sentence) }).toEqual({ key, sentence, whole: true });
    }
  });

  test("a quotation's attribution stays with it: no sentence is a bare 'said Scrooge's nephew.'", () => {
    expect(
      sentences("'Christmas a humbug, uncle!' said Scrooge's nephew. 'You don't mean that?' 'I do.'"),
    ).toEqual(["'Christmas a humbug, uncle!' said Scrooge's nephew.", "'You don't mean that?'", "'I do.'"]);
    for (const [key, body] of answers)
      for (const line of body.response.split("\n").filter((l) => l.trim())) {
        const text = prose(line);
        expect({
          key,
          text,
          attribution: /^(said|cried|asked|returned|replied|repeated)\b/.test(text),
        }).toEqual({
          key,
          text,
          attribution: false,
        });
      }
  });

  test("the Cratchits' dinner opens with the dinner, not with Martha hiding", () => {
    for (const kind of ["local", "global"]) {
      const opening = (answers.get(`${kind} What did the Cratchits have for dinner?`)?.response ?? "").split(
        "\n",
      )[0];
      expect(opening).toMatch(/goose|dinner|pudding/i);
      expect(opening).not.toMatch(/Martha hid/);
    }
  });
});
