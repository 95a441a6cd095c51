/**
 * Candidate answers in a sentence: the name, place, number, age or date of the type a question asks for
 * that the question does not already name. Names are typed by what the index knows of them, else by the
 * cues around the mention ("Mr.", "said", "in"); a number counts as an answer when it is counted in what
 * the question measures ("eight feet" for "how tall"); an age only when said of the one asked about.
 * Found candidates are weighed in passages.ts.
 */
import {
  EVENT_WORDS,
  GAZETTEER,
  HONORIFICS,
  mentionsIn,
  ORGANIZATION_WORDS,
  PLACE_WORDS,
} from "../indexing/names.ts";
import { titleCased } from "../text.ts";
import type { Question } from "./question.ts";
import { stem, wordsOf } from "./terms.ts";
import { poolCases } from "./unit-words.ts";

/** Looks up the types the index gave these names (entity names as stored). */
export type NameTypes = (names: string[]) => Promise<Map<string, string>>;

/** A sentence's candidate: its name as written, and whether it surely fits (else only a guess). */
export type Finder = (text: string) => { name: string; strong: boolean } | undefined;

/**
 * The finder for one question over one pool: the names the passages (and the sentences after them)
 * mention are typed once, in one lookup, before any sentence is read.
 */
export async function candidateFinder(
  question: Question,
  asked: Set<string>,
  typesOf: NameTypes,
  units: { text: string }[],
  passages: { text: string; next?: string }[],
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
      // Or in small capitals, which plain text writes in capitals: "the HISPANIOLA", "the old WALRUS".
      // Of several, the one nearest the question's words ("the old WALRUS, Flint's old ship").
      const titled = titlesIn(text);
      if (titled.length > 0) return { name: nearest(titled, text, asked), strong: true };
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

const ITALIC = /(?<![\p{L}_])_([\p{Lu}][^_]{0,60}?)_(?![\p{L}_])/gu;
/** Capitals inside a sentence that is not in capitals: one to three words after a lower-case word. */
const SMALL_CAPITALS = /(?<=\p{Ll}[,;:]?\s)(\p{Lu}{3,}(?:[\s-]\p{Lu}{2,}){0,2})(?![\p{L}])/gu;

/** The titles a sentence sets apart, in italics or small capitals, each with where it stands. */
function titlesIn(text: string): { name: string; at: number }[] {
  const found: { name: string; at: number }[] = [];
  for (const m of text.matchAll(ITALIC))
    found.push({ name: (m[1] ?? "").trim().replace(/[,;:.]+$/, ""), at: m.index ?? 0 });
  for (const m of text.matchAll(SMALL_CAPITALS)) {
    const caps = m[1] ?? "";
    // A Roman numeral is a chapter's number, not a name.
    if (/^[IVXLCDM]+$/.test(caps)) continue;
    found.push({ name: titleCased(caps), at: m.index ?? 0 });
  }
  return found.filter((t) => t.name !== "");
}

/** Of a sentence's titles, the one nearest a word of the question (the first when none is there). */
function nearest(titles: { name: string; at: number }[], text: string, asked: Set<string>): string {
  const spots = [...text.matchAll(/\p{L}+/gu)]
    .filter((m) => asked.has(stem(m[0].toLowerCase())))
    .map((m) => m.index ?? 0);
  if (spots.length === 0) return (titles.sort((a, b) => a.at - b.at)[0] as { name: string }).name;
  const distance = (t: { at: number }) => Math.min(...spots.map((s) => Math.abs(s - t.at)));
  return (titles.sort((a, b) => distance(a) - distance(b) || a.at - b.at)[0] as { name: string }).name;
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
function numbersIn(text: string): string[] {
  return [...text.matchAll(NUMBER)].map((m) => m[0].trim());
}

const AGE = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:(?:\\d+|${NUMBER_WORD}(?:[- ]${NUMBER_WORD})*) years? (?:old|of age)|aged (?:\\d+|${NUMBER_WORD}(?:[- ]${NUMBER_WORD})*))(?![\\p{L}\\p{N}])`,
  "iu",
);

/** An age as a sentence says one ("eighty-eight year old", "seventy years of age", "aged forty"). */
function ageIn(text: string): string | undefined {
  return text.match(AGE)?.[0];
}

/** A year as a sentence writes one: "1667", "in the year 1791". */
const YEAR = /(?<![\p{N},.])1[0-9]{3}(?![\p{N}])/u;

const MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December";
const DATE = new RegExp(
  `\\b(?:(?:\\d{1,2}(?:st|nd|rd|th)? )?(?:${MONTHS})\\b(?: \\d{1,2}(?:st|nd|rd|th)?)?(?:,? \\d{4})?|\\d{4}\\b|(?:Sunday|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday)|(?:spring|summer|autumn|winter)\\b|\\w+ o['’]clock|(?:half|a quarter) (?:past|to) \\w+|\\d{1,2}:\\d{2}\\b|\\b(?:noon|midday|midnight|dawn|daybreak|sunrise|sunset|dusk|nightfall)\\b|(?:${NUMBER_WORD}(?:[- ]${NUMBER_WORD})*) (?:years?|months?|weeks?|days?) (?:ago|before|after|later))`,
  "i",
);

/** A date or time ("March", "the 5th of May 1791", "winter", "seven years ago"), if the sentence has one. */
function dateIn(text: string): string | undefined {
  const m = text.match(DATE);
  if (!m) return undefined;
  // "May" and "March" are verbs too: only a capitalised month counts.
  if (/^(may|march)$/i.test(m[0]) && !/^[A-Z]/.test(m[0])) return undefined;
  return m[0].trim();
}
