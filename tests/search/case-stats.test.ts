/**
 * caseStats, the offline extractor's count of how a document capitalises each word, is a hand-written
 * scan for speed: it must count exactly what its definition says (words /[A-Za-z][A-Za-z'’]*\/ without a
 * trailing possessive, lower case or capitalised, capitalised mid-sentence), on the corpus and on
 * generated text full of apostrophes and sentence breaks. The passage scorer keeps each unit's counts
 * (casePart) and joins them per question (joinCases): the join must count exactly what one scan of the
 * units joined by newlines counts, a unit that opens with a name after one ending mid-sentence included.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { casePart, caseStats, joinCases } from "../../server/search/indexing/names.ts";
import { fixtureText } from "./fixtures.ts";

/** The definition, written with the regular expressions. */
function byDefinition(text: string) {
  const stats = new Map<string, { lower: number; upper: number; inside: number }>();
  for (const match of text.matchAll(/[A-Za-z][A-Za-z'’]*/g)) {
    const word = match[0].replace(/['’]s?$/, "");
    const entry = stats.get(word.toLowerCase()) ?? { lower: 0, upper: 0, inside: 0 };
    stats.set(word.toLowerCase(), entry);
    if (/^[a-z]/.test(word)) entry.lower++;
    else {
      entry.upper++;
      const before = /([^\s])\s+$/.exec(text.slice(0, match.index));
      if (before && /[a-z,;]/.test(before[1] as string)) entry.inside++;
    }
  }
  return stats;
}

const same = (text: string) => expect(new Map([...caseStats(text)])).toEqual(byDefinition(text));

test("the scan counts what the definition counts, on the corpus and on generated text", () => {
  same(fixtureText("stave-one.txt"));
  same(fixtureText("stave-three.txt"));
  const unit = fc.constantFrom("a", "B", "s", "S", "'", "’", " ", ",", ";", ".", "\n", "x", "Z", "é", "-");
  fc.assert(
    fc.property(fc.string({ unit, maxLength: 40 }), (text) => {
      same(text);
    }),
    { numRuns: 5000 },
  );
});

const joinedSame = (texts: string[]) =>
  expect([...joinCases(texts.map(casePart)).entries()]).toEqual([...caseStats(texts.join("\n")).entries()]);

test("units' own counts, joined, are the counts of the units joined, in the same order", () => {
  // "Ghost" opens the second unit after the first ended mid-sentence: capitalised inside a sentence.
  joinedSame(["Scrooge saw the", "Ghost of Marley, and the", "", "  \n", "Ghost said so. Then", "Bob left"]);
  joinedSame(["It ended.", "Ghost stood", "'Twas so,", "\tMarley;", "marley"]);
  const stave = fixtureText("stave-one.txt");
  joinedSame(Array.from({ length: 12 }, (_, i) => stave.slice(i * 700, i * 700 + 900)));
  const unit = fc.constantFrom("a", "B", "s", "S", "'", "’", " ", ",", ";", ".", "\n", "\t", "x", "Z", "é");
  fc.assert(
    fc.property(fc.array(fc.string({ unit, maxLength: 12 }), { maxLength: 6 }), (texts) => {
      joinedSame(texts);
    }),
    { numRuns: 5000 },
  );
});
