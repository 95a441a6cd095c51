/**
 * A sentence that states the asked relation outright: "Charlotte, the wife of Mr. Collins", "Bob
 * Cratchit, clerk to Ebenezer Scrooge", "Mr. Collins's wife, Charlotte", "Charlotte was the wife of
 * Mr. Collins". A question asking "whom does Collins marry" is answered by the sentence where a person
 * stands in apposition (or as the subject of "is/was") to a relation word of the question (its own word
 * or an everyday equivalent: marry → wife) said of the person the question names, not by one where the
 * three only happen to meet ("You must make Lizzy marry Mr. Collins").
 */
import type { Question } from "./question.ts";
import { stem, wordsOf } from "./terms.ts";

/** Words that may stand between a name and its relation ("Charlotte, the late wife of…"). */
const LINK = new Set(
  "the a an his her their its is was were be been became being now then only own late eldest youngest elder younger dear".split(
    " ",
  ),
);
const OF = new Set(["of", "to", "for"]);

/** The stems a relation can be said in: the question's own words (not its names) and their equivalents. */
export function relationStems(question: Question): Set<string> {
  const names = new Set(question.names);
  const out = new Set<string>();
  for (const t of question.terms) {
    if (names.has(t)) continue;
    out.add(stem(t));
    for (const r of question.related.get(t) ?? []) out.add(stem(r));
  }
  return out;
}

/**
 * Whether `text` states a relation of the question between `candidate` and a name the question gives:
 * "C, the REL of N", "C is the REL of N", "C, N's REL", "N's REL, C", "the REL of N, C".
 */
export function statesRelation(
  text: string,
  candidate: string,
  question: Question,
  rel: Set<string>,
): boolean {
  if (question.names.length === 0 || rel.size === 0) return false;
  const words = wordsOf(text);
  const stems = words.map(stem);
  const names = new Set(question.names.map(stem));
  const cand = wordsOf(candidate).map(stem);
  const start = indexOfRun(stems, cand);
  if (start < 0 || cand.length === 0) return false;
  const end = start + cand.length - 1;
  const isName = (i: number) => i >= 0 && i < stems.length && names.has(stems[i] as string);
  const nameWithin = (from: number, span: number) => {
    for (let i = from; i < Math.min(stems.length, from + span); i++) if (isName(i)) return i;
    return -1;
  };
  // Forward: C, (the) REL of N.
  let j = end + 1;
  while (j < stems.length && j <= end + 3 && LINK.has(words[j] as string)) j++;
  if (rel.has(stems[j] as string) && OF.has(words[j + 1] as string) && nameWithin(j + 2, 3) >= 0) return true;
  // Forward: C, N's REL ("Fred, Scrooge's nephew").
  if (isName(j) && /['’]s$/.test(words[j] as string) && rel.has(stems[j + 1] as string)) return true;
  // Backward: N's REL, C and the REL of N, C.
  for (let i = Math.max(0, start - 7); i < start; i++) {
    if (!rel.has(stems[i] as string)) continue;
    const before = i - 1;
    if (isName(before) && /['’]s$/.test(words[before] as string) && start - i <= 3) return true;
    if (OF.has(words[i + 1] as string)) {
      const n = nameWithin(i + 2, 3);
      if (n >= 0 && start > n && start - n <= 3) return true;
    }
  }
  return false;
}

function indexOfRun(haystack: string[], run: string[]): number {
  outer: for (let i = 0; i + run.length <= haystack.length; i++) {
    for (let k = 0; k < run.length; k++) if (haystack[i + k] !== run[k]) continue outer;
    return i;
  }
  return -1;
}
