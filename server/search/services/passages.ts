/**
 * Passage scoring, shared by local search (which sources go into the context, and the offline answer's
 * opening) and offline global search (the passages beside the community reports).
 *
 * Every sentence of the candidate text units is scored on the question's terms, each weighted by how rare
 * it is in the index (a word in every unit says little; the rarest word of the question says most), with
 * the neighbouring sentences counting a third; then a sentence that holds a candidate of the type the
 * question asks for (a person, a place, a date, a number… that the question does not already name) gains.
 * `coverage` is the share of the question's weighted content terms (its names aside: they find the
 * passage, `named` says whether it is about them) a sentence holds, which the answerers use to
 * tell an answer from a near miss.
 */
import {
  EVENT_WORDS,
  GAZETTEER,
  HONORIFICS,
  mentionsIn,
  ORGANIZATION_WORDS,
  PLACE_WORDS,
} from "../indexing/names.ts";
import { definitionTest } from "./definition.ts";
import type { Question } from "./question.ts";
import { relationStems, statesRelation } from "./relation.ts";
import { speakerTest } from "./speaker.ts";
import { stem, wordsOf } from "./terms.ts";
import { poolCases, unitWords } from "./unit-words.ts";

export interface PassageUnit {
  id: number;
  text: string;
  /** Where the unit sits in its document, 0 (start) to 1 (end), when known. */
  position?: number;
}

export interface Passage {
  text: string;
  unit: number;
  score: number;
  /** Share of the question's weighted terms this sentence (and a third of its neighbours) holds. */
  coverage: number;
  /** The candidate answer of the wanted type this sentence holds, if any. */
  candidate?: string;
  /** Candidates that were only guessed (an untyped name): weaker evidence. */
  weak?: boolean;
  /** The sentence or a neighbour names someone or something the question names. */
  named: boolean;
  order: number;
}

/**
 * One term of the question: its weight in (0, 1] (the rarest term of the question 1) and the stems that
 * count for it (its own 1, an everyday equivalent less).
 */
export interface TermGroup {
  term: string;
  name: boolean;
  weight: number;
  stems: Map<string, number>;
}

/** idf = ln(1 + N / df), scaled so the rarest term any unit holds is 1; a name counts half. */
export function termGroups(
  terms: { term: string; df: number; name?: boolean; related?: string[] }[],
  units: number,
): TermGroup[] {
  const idf = (df: number) => Math.log(1 + Math.max(1, units) / Math.max(1, df));
  const top = Math.max(0, ...terms.filter((t) => t.df > 0).map((t) => idf(t.df)));
  return terms.map((t) => {
    const stems = new Map([[stem(t.term), 1]]);
    for (const r of t.related ?? []) if (!stems.has(stem(r))) stems.set(stem(r), RELATED);
    const weight = top > 0 ? Math.min(1, idf(t.df) / top) : 1;
    return { term: t.term, name: t.name === true, weight: weight * (t.name ? NAME : 1), stems };
  });
}

const NAME = 0.5;
const RELATED = 0.7;

/** A passage holding less of the question's weighted terms than this is a near miss, said as such. */
const CONFIDENT_COVERAGE = 0.5;

/**
 * Whether a passage answers the question rather than comes near it: it holds most of the question's
 * weighted terms and, when the question wants a person, place, date, number or name, a fitting one.
 */
export function answers(p: Passage, question: Question): boolean {
  const typed = question.type !== "thing" || question.wantsName;
  return (
    p.coverage >= CONFIDENT_COVERAGE &&
    (!typed || (p.candidate !== undefined && !p.weak)) &&
    (question.names.length === 0 || p.named)
  );
}

/**
 * The passage an answer opens with: the best that answers the question when one scores near the best
 * (a sentence naming a fitting candidate beats a closer match that names none), else the best, which
 * the answerers give as a near miss.
 */
export function leadPassage(passages: Passage[], question: Question): Passage | undefined {
  const best = passages[0];
  if (!best) return undefined;
  // A heading or a list of captions is no answer, however many fitting names it holds.
  const said = (p: Passage) => /[.!?]["'’”)_]*$/.test(p.text);
  return passages.find((p) => p.score >= LEAD_MARGIN * best.score && said(p) && answers(p, question)) ?? best;
}

/** A passage that answers may open the answer when it scores at least this share of the best. */
const LEAD_MARGIN = 0.5;

const NEIGHBOUR = 0.33;
const PAGE = 0.25;
const TYPE_BONUS = 0.6;
const WEAK_BONUS = 0.3;
const RELATION_BONUS = 0.6;
const DEFINITION_BONUS = 1;
const SPEAKER_BONUS = 0.6;
/** A name the question writes, met in lower case ("the park" for "Netherfield Park"): a common word, mostly. */
const LOWER = 0.3;
const MIN_CHARS = 20;

/** Looks up the types the index gave these names (entity names as stored). */
export type NameTypes = (names: string[]) => Promise<Map<string, string>>;

export async function scorePassages(
  units: PassageUnit[],
  question: Question,
  groups: TermGroup[],
  typesOf: NameTypes,
  limit = 40,
  further = 0,
): Promise<Passage[]> {
  const content = groups.some((g) => !g.name) ? groups.filter((g) => !g.name) : groups;
  const total = content.reduce((sum, g) => sum + g.weight, 0) || 1;
  const definition = definitionTest(question);
  const speaks = speakerTest(question);
  const raw: Raw[] = [];
  const seen = new Set<string>();
  let order = 0;
  for (const unit of units) {
    const { list, bags, whole, capitals, wholeCapitals } = unitWords(unit.text);
    // A name the question writes matches the name, not the common word ("Netherfield Park", not "the park"):
    // met in lower case it counts a little, so a question in Title Case still finds its verbs.
    const bagsOf = (g: TermGroup) => (g.name ? capitals : bags);
    const edge = question.position ? along(bags, groups, question.position) : undefined;
    for (const [i, sentence] of list.entries()) {
      const text = sentence.trim();
      if (text.length < MIN_CHARS || seen.has(text)) continue;
      // A unit cut at a line of a hard-wrapped book opens with a sentence's tail ("nothing ever happened
      // on this globe…"), whose head is in the unit before: no passage to quote.
      if (i === 0 && unit.position !== 0 && /^\p{Ll}/u.test(text)) continue;
      seen.add(text);
      const bag = bags[i] as Set<string>;
      let own = 0;
      let near = 0;
      let covered = 0;
      let far = 0;
      let held = 0;
      for (const g of groups) {
        const cased = bagsOf(g);
        const here = g.name ? Math.max(matchIn(cased[i], g), LOWER * matchIn(bag, g)) : matchIn(bag, g);
        const around = here > 0 ? 0 : Math.max(matchIn(cased[i - 1], g), matchIn(cased[i + 1], g));
        // A term elsewhere on the page: the page is about it, the sentence may answer it in other words
        // ("He was an old Wellfleet oysterman…" then, lines on, "I am eighty-eight year old.").
        const page = here > 0 || around > 0 ? 0 : matchIn(g.name ? wholeCapitals : whole, g);
        own += here;
        near += around;
        if (!g.name) far += page;
        if (content.includes(g)) covered += here + NEIGHBOUR * around + PAGE * page;
        if (here > 0) held++;
      }
      // The passage is about what the question names when the sentence or one near it names it.
      const named = groups.some(
        (g) => g.name && [-2, -1, 0, 1, 2].some((d) => matchIn(capitals[i + d], g) > 0),
      );
      if (own === 0) continue;
      let score = own + NEIGHBOUR * near + PAGE * far + form(text);
      // "How does the author describe X?": the sentence saying what X is answers it in its own words.
      const defines = definition?.(text) === true;
      if (defines) score += DEFINITION_BONUS;
      // "What does Scrooge think of Christmas?": what Scrooge says of it ("…,' said Scrooge"), not
      // whatever he says ("'I do,' said Scrooge": the speaker's is the only term it holds).
      if (held > 1 && speaks?.(text)) score += SPEAKER_BONUS;
      if (question.position && unit.position !== undefined)
        score +=
          edgeBonus(question.position === "end" ? unit.position : 1 - unit.position) * (edge?.(i) ?? 1);
      raw.push({
        text,
        unit: unit.id,
        score,
        coverage: defines ? 1 : covered / total,
        order: order++,
        named,
        next: list[i + 1]?.trim(),
      });
    }
  }
  raw.sort((a, b) => b.score - a.score || a.order - b.order);
  const top = raw.slice(0, limit * 2);
  await addCandidates(top, question, typesOf, units);
  top.sort((a, b) => b.score - a.score || a.order - b.order);
  // `further` beyond the first `limit` (the same either way): the sentences a context gives as windows.
  const kept = [...top, ...raw.slice(limit * 2, limit + further)];
  return kept.slice(0, limit + further).map(({ next: _n, ...p }) => p);
}

type Raw = Passage & { next?: string };

/**
 * Within a page at the edge, how near the story's edge a sentence is (0.5 to 1): the story ends with the
 * page's last sentence about the question (its names, else its terms), not with a licence printed after.
 */
function along(bags: Set<string>[], groups: TermGroup[], position: "start" | "end"): (i: number) => number {
  const key = groups.some((g) => g.name) ? groups.filter((g) => g.name) : groups;
  const about = bags.flatMap((bag, k) => (key.some((g) => matchIn(bag, g) > 0) ? [k] : []));
  const first = about[0] ?? 0;
  const last = about.at(-1) ?? bags.length - 1;
  if (position === "end") return (i) => (i > last ? 0.5 : 0.5 + 0.5 * (last > 0 ? i / last : 1));
  const span = bags.length - 1 - first;
  return (i) => (i < first ? 0.5 : 0.5 + 0.5 * (span > 0 ? (bags.length - 1 - i) / span : 1));
}

/** "By the end of the story": the last tenth of a document, the closer to its edge the more. */
function edgeBonus(position: number): number {
  return position < 0.9 ? 0 : (position - 0.9) * 10;
}

/** The weight a term group earns in a bag of stems: its best stem's. */
function matchIn(bag: Set<string> | undefined, g: TermGroup): number {
  if (!bag) return 0;
  let best = 0;
  for (const [s, factor] of g.stems) if (factor > best && bag.has(s)) best = factor;
  return best * g.weight;
}

/** A question, or a quoted question with its attribution ("'What is his name?' asked Mr. Bennet."). */
function asks(text: string): boolean {
  return /\?["'’”)_]*$/.test(text) || /\?["'’”)]+\s+\p{Ll}[^"'“‘’”?!.]*\.?$/u.test(text);
}

/** A complete, readable sentence states a fact better than a question, a heading or a page-long list. */
function form(text: string): number {
  let score = 0;
  if (asks(text)) score -= 0.5;
  else if (!/[.!;]["'’”)_]*$/.test(text)) score -= 0.4;
  // "said Bob, with a sudden declension…": the tail of a quotation.
  if (/^[a-z]/.test(text)) score -= 0.2;
  // "Alphonse Frankenstein.", "The Wellfleet Oysterman VI.": a signature or a heading, every word capitalised.
  else if ((text.match(/\p{L}+/gu) ?? []).every((word) => /^\p{Lu}/u.test(word))) score -= 0.4;
  if (text.length > 350) score -= 0.2;
  if (text.length > 600) score -= 0.3;
  return score;
}

/**
 * Finds in each sentence a candidate of the wanted type that the question does not already name. A
 * sentence that asks ("Have you had many brothers, Spirit?") may be answered by the next one ("More than
 * eighteen hundred," said the Ghost): then the passage is both.
 */
async function addCandidates(passages: Raw[], question: Question, typesOf: NameTypes, units: PassageUnit[]) {
  const type = question.type;
  if (type === "thing" && !question.wantsName) return;
  const asked = new Set(question.terms.map(stem));
  const finder = await candidateFinder(question, asked, typesOf, units, passages);
  const rel = relationStems(question);
  for (const p of passages) {
    let found = finder(p.text);
    if (!found && p.next && asks(p.text)) {
      found = finder(p.next);
      if (found) p.text = `${p.text} ${p.next}`;
    }
    if (!found) continue;
    p.candidate = found.name;
    p.weak = !found.strong;
    p.score += found.strong ? TYPE_BONUS : WEAK_BONUS;
    // "Charlotte, the wife of Mr. Collins": the sentence states the asked relation, not a chance meeting.
    if (found.strong && statesRelation(p.text, found.name, question, rel)) p.score += RELATION_BONUS;
  }
}

type Finder = (text: string) => { name: string; strong: boolean } | undefined;

async function candidateFinder(
  question: Question,
  asked: Set<string>,
  typesOf: NameTypes,
  units: PassageUnit[],
  passages: Raw[],
): Promise<Finder> {
  const type = question.type;
  if (type === "number" && /^how old\b|\bwhat age\b/i.test(question.text)) {
    const names = new Set(question.names.map(stem));
    // An age is said as one ("eighty-eight year old", "aged forty"); "twenty years ago" is no age.
    return (text) => {
      const age = ageIn(text);
      // Said of the one asked about: the sentence names them, or they say it ("I am eighty-eight year
      // old"); "a grey-haired rascal, nearly seventy years of age" is no answer to "How old is Scrooge?".
      if (age) return { name: age, strong: names.size === 0 || saidOf(text, names) };
      const first = numbersIn(text)[0];
      return first ? { name: first, strong: false } : undefined;
    };
  }
  if (type === "number")
    return (text) => {
      const found = numbersIn(text).filter((n) => !asked.has(stem(n.split(/[\s-]/)[0] ?? "")));
      // A number counted in what the question asks about ("eight feet" for "how tall"), or ending its
      // clause ("more than eighteen hundred,"), answers; one counting something else is a guess.
      const measure = (n: string) => {
        const unit = n.match(/ ([\p{L}'’]+)$/u)?.[1]?.toLowerCase();
        return unit === undefined || NUMBER_PART.test(unit) ? undefined : unit;
      };
      const measured = (unit: string | undefined) =>
        unit !== undefined && (question.measures?.has(unit) || question.measures?.has(stem(unit)));
      const fitting = found.find((n) => measured(measure(n)));
      if (fitting) return { name: fitting, strong: true };
      // "fifteen argand lamps", "two young children": the counted word after one describing it.
      for (const n of found) {
        const next = text
          .slice(text.indexOf(n) + n.length)
          .match(/^ ([\p{L}'’]+)/u)?.[1]
          ?.toLowerCase();
        if (measure(n) !== undefined && measured(next)) return { name: `${n} ${next}`, strong: true };
      }
      const bare = found.find((n) => measure(n) === undefined);
      const first = bare ?? found[0];
      if (!first) return undefined;
      const counted =
        question.measures !== undefined && !/^how (much|long|far|tall|high|old)/i.test(question.text);
      return { name: first, strong: bare !== undefined && counted ? true : !question.measures };
    };
  if (type === "date") {
    // "In what year…": a year answers, a season or a month only comes near.
    const year = question.focus === "year" || /\bwhat year\b/i.test(question.text);
    return (text) => {
      const y = year ? text.match(YEAR)?.[0] : undefined;
      if (y) return { name: y, strong: true };
      const found = dateIn(text);
      if (!found || asked.has(stem(found.split(" ")[0] ?? ""))) return undefined;
      return { name: found, strong: !year };
    };
  }
  // Names: typed by what the index knows of them, else by the cues around the mention.
  // The pool's case statistics, as one scan of its texts joined would count them (names.ts joinCases).
  const pool = poolCases(units);
  // Each passage's mentions are read twice (to look up their types, then to find the candidate).
  const mentioned = new Map<string, ReturnType<typeof mentionsIn>>();
  const mentionsOf = (text: string) => {
    let found = mentioned.get(text);
    if (!found) {
      let all = pool.mentions.get(text);
      if (!all) {
        all = mentionsIn(text, pool.stats);
        pool.mentions.set(text, all);
      }
      found = all.filter(
        (m) => !m.core.every((w) => asked.has(stem(w))) && !HONORIFICS.has(m.core[0]?.toLowerCase() ?? ""),
      );
      mentioned.set(text, found);
    }
    return found;
  };
  const texts = passages.flatMap((p) => (p.next ? [p.text, p.next] : [p.text]));
  const names = [...new Set(texts.flatMap(mentionsOf).flatMap((m) => [m.name, m.core.join(" ")]))];
  const known = names.length > 0 ? await typesOf(names) : new Map<string, string>();
  return (text) => {
    let weak: string | undefined;
    if (question.title) {
      // Plain-text books set titles and ships' names in italics: "_Paradise Lost_", "the brig _St. John_".
      const italic = text.match(/(?<![\p{L}_])_([\p{Lu}][^_]{0,60}?)_(?![\p{L}_])/u)?.[1];
      if (italic) return { name: italic.trim(), strong: true };
    }
    for (const m of mentionsOf(text)) {
      const typed = known.get(m.name) ?? known.get(m.core.join(" ")) ?? cueType(m);
      if (typed !== undefined && fits(type, typed)) return { name: m.name, strong: true };
      // A person or a place is no title: "which books" is not answered by who read them.
      const untitled = question.title && (typed === "person" || typed === "geo");
      if (!weak && !untitled && (typed === undefined || type === "thing")) weak = m.name;
    }
    return weak ? { name: weak, strong: false } : undefined;
  };
}

/** A sentence names one of `names` (stems), or says "I am…" with no one else named ("…,' said Harrow, 'and I am…"). */
function saidOf(text: string, names: Set<string>): boolean {
  if (wordsOf(text).some((w) => names.has(stem(w)))) return true;
  const others = (text.match(/(?<=\S\s+)\p{Lu}[\p{L}’']*/gu) ?? []).filter((w) => w !== "I");
  return /\bI(?: am|'m|’m)\b/.test(text) && others.length === 0;
}

function fits(wanted: Question["type"], typed: string): boolean {
  // A named house, inn or college is a place as well as an institution ("Lucas Lodge", "the University of
  // Ingolstadt"), as a question for an organisation takes a place.
  if (wanted === "place") return typed === "geo" || typed === "organization";
  if (wanted === "organization") return typed === "organization" || typed === "geo";
  if (wanted === "thing") return typed !== "person";
  return typed === wanted;
}

function cueType(m: ReturnType<typeof mentionsIn>[number]): string | undefined {
  if (m.honorific || m.cues.includes("speech") || m.cues.includes("adjective")) return "person";
  if (m.core.some((w) => ORGANIZATION_WORDS.has(w))) return "organization";
  if (m.core.some((w) => PLACE_WORDS.has(w)) || m.core.every((w) => GAZETTEER.has(w))) return "geo";
  if (m.cues.includes("locative")) return "geo";
  if (m.core.some((w) => EVENT_WORDS.has(w))) return "event";
  return undefined;
}

const NUMBER_WORD =
  "(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|half|dozen|score)";
const NUMBER = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:\\d[\\d,.]*|${NUMBER_WORD}(?:(?:[- ]|,? and (?:a )?)${NUMBER_WORD})*)(?![\\p{L}\\p{N}])(?: (?!(?:and|or|of|the|a|to|in|that|which|he|she|it|i|we|they|as|at|by|for|with|on)\\b)[\\p{L}'’]+)?`,
  "giu",
);

const NUMBER_PART = new RegExp(`^${NUMBER_WORD}$`, "i");

/** The numbers a sentence holds, each with the word after it ("eight feet", "ten shillings", "1,500"). */
export function numbersIn(text: string): string[] {
  return [...text.matchAll(NUMBER)].map((m) => m[0].trim());
}

const AGE = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:(?:\\d+|${NUMBER_WORD}(?:[- ]${NUMBER_WORD})*) years? (?:old|of age)|aged (?:\\d+|${NUMBER_WORD}(?:[- ]${NUMBER_WORD})*))(?![\\p{L}\\p{N}])`,
  "iu",
);

/** An age as a sentence says one ("eighty-eight year old", "seventy years of age", "aged forty"). */
export function ageIn(text: string): string | undefined {
  return text.match(AGE)?.[0];
}

/** A year as a sentence writes one: "1667", "in the year 1791". */
const YEAR = /(?<![\p{N},.])1[0-9]{3}(?![\p{N}])/u;

const MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December";
const DATE = new RegExp(
  `\\b(?:(?:\\d{1,2}(?:st|nd|rd|th)? )?(?:${MONTHS})\\b(?: \\d{1,2}(?:st|nd|rd|th)?)?(?:,? \\d{4})?|\\d{4}\\b|(?:Sunday|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday)|(?:spring|summer|autumn|winter)\\b|\\w+ o'clock|(?:${NUMBER_WORD}(?:[- ]${NUMBER_WORD})*) (?:years?|months?|weeks?|days?) (?:ago|before|after|later))`,
  "i",
);

/** A date or time ("March", "the 5th of May 1791", "winter", "seven years ago"), if the sentence has one. */
export function dateIn(text: string): string | undefined {
  const m = text.match(DATE);
  if (!m) return undefined;
  // "May" and "March" are verbs too: only a capitalised month counts.
  if (/^(may|march)$/i.test(m[0]) && !/^[A-Z]/.test(m[0])) return undefined;
  return m[0].trim();
}
