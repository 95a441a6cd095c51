/**
 * caseStats, the offline extractor's count of how a document capitalises each word, is a hand-written
 * scan for speed: it must count exactly what its definition says (words /[A-Za-z][A-Za-z'’]*\/ without a
 * trailing possessive, lower case or capitalised, capitalised mid-sentence), on the corpus and on
 * generated text full of apostrophes and sentence breaks.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { caseStats } from "../../server/search/indexing/names.ts";
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
