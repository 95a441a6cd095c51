/**
 * Query text → FTS5 match expressions and plain terms for scoring sentences. Stop words are dropped (they
 * match everything and say nothing); every term is quoted so user text can never be FTS5 syntax.
 */

const STOP_WORDS = new Set(
  "a an and are as at be but by for from has have he her his how i in is it its me my of on or our she so that the their them there they this to was we were what when where which who whom why will with would you your do does did about into tell say said all any can could should".split(
    " ",
  ),
);

export function queryTerms(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.filter((w) => w.length > 1 && !STOP_WORDS.has(w)))].slice(0, 32);
}

/** An OR of quoted terms, or undefined when the query has no searchable word. */
export function ftsMatch(text: string): string | undefined {
  const terms = queryTerms(text);
  return terms.length > 0 ? terms.map((t) => `"${t}"`).join(" OR ") : undefined;
}

/** A crude stem so "ghosts" meets "ghost" when scoring sentences. */
export function stem(word: string): string {
  return word.toLowerCase().replace(/(ies|es|s|'s|’s)$/, "");
}

/** How many of the query's terms a text contains (stemmed). */
export function termOverlap(text: string, terms: string[]): number {
  const words = new Set((text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map(stem));
  let hits = 0;
  for (const term of terms) if (words.has(stem(term))) hits++;
  return hits;
}
