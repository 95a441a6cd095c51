/**
 * Query text → FTS5 match expressions and plain terms for scoring sentences. Stop words are dropped (they
 * match everything and say nothing); every term is quoted so user text can never be FTS5 syntax.
 */

const STOP_WORDS = new Set(
  "a an and are as at be but by for from has have he her his how i in is it its me my of on or our she so that the their them there they this to was we were what when where which who whom whose why will with would you your do does did about into tell say said all any can could should been being had than then these those also just very more most some such only own same other".split(
    " ",
  ),
);

export function queryTerms(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.filter((w) => w.length > 1 && !STOP_WORDS.has(w)))].slice(0, 32);
}

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word.toLowerCase());
}

/** An OR of quoted terms, or undefined when the query has no searchable word. */
export function ftsMatch(text: string): string | undefined {
  const terms = queryTerms(text);
  return terms.length > 0 ? terms.map((t) => `"${t}"`).join(" OR ") : undefined;
}

/**
 * A light English stemmer, so "employs" meets "employed", "married" meets "marry" and "books" meets
 * "book" when sentences are scored in JavaScript (FTS5's Porter stemmer does the same inside SQLite).
 */
export function stem(word: string): string {
  const known = STEMS.get(word);
  if (known !== undefined) return known;
  const stemmed = stemOf(word);
  // Scoring a question stems every word of its passages: the same few thousand words, again and again.
  if (STEMS.size >= MAX_STEMS) STEMS.clear();
  STEMS.set(word, stemmed);
  return stemmed;
}

const STEMS = new Map<string, string>();
const MAX_STEMS = 50_000;

function stemOf(word: string): string {
  let w = word.toLowerCase().replace(/['’]s?$/, "");
  const base = IRREGULAR.get(w);
  if (base) return base;
  if (w.length <= 3) return w;
  if (/ie[sd]$/.test(w) && w.length > 4) return `${w.slice(0, -3)}y`;
  if (w.endsWith("ing") && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith("ed") && w.length > 4) w = w.slice(0, -2);
  else if (/(ch|sh|x|ss|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith("e") && w.length > 3) w = w.slice(0, -1);
  if (/([bdfgmnprt])\1$/.test(w)) w = w.slice(0, -1);
  return w;
}

/** English irregular verb forms → the stem of their base form ("ran" meets "run", "went" meets "go"). */
const IRREGULAR = new Map<string, string>();
for (const line of `run ran|go went gone|come came|take took taken|see saw seen|give gave given|tell told|find found
  |leave left|make made|think thought|know knew known|write wrote written|buy bought|bring brought|eat ate eaten
  |speak spoke spoken|hold held|meet met|sit sat|stand stood|fall fell fallen|become became|begin began begun
  |keep kept|lose lost|pay paid|send sent|teach taught|catch caught|fight fought|seek sought|sell sold|feel felt
  |lead led|fly flew flown|grow grew grown|draw drew drawn|wear wore worn|break broke broken|choose chose chosen
  |drive drove driven|ride rode ridden|rise rose risen|steal stole stolen|swim swam|sing sang sung|drink drank
  |win won|hear heard|say said|die died dies dying dead death|born birth|bear bore|lie lay lain|get got|sleep slept|build built`.split(
  "|",
)) {
  const [base, ...forms] = line.trim().split(" ");
  const root = stemOf(base as string);
  for (const form of forms) IRREGULAR.set(form, root);
}

/** The words of a text, lower case, in order. */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? [];
}

/** How many of the query's terms a text contains (stemmed). */
export function termOverlap(text: string, terms: string[]): number {
  const words = new Set(wordsOf(text).map(stem));
  let hits = 0;
  for (const term of terms) if (words.has(stem(term))) hits++;
  return hits;
}
