/**
 * The offline local answer: written from the local context the way a reader answers from a book.
 *
 * It opens with the one sentence that best answers the question: sentences of the in-context sources are
 * scored by whether they name the entity the question is about (the subject: the matched entity whose
 * name the query spells out), by the query's words (with a few everyday equivalents: "live" finds
 * "home" and "house"), and by what the question word asks for (a place for "where", a time for "when",
 * a description for "who"). Then the subject and its strongest relationships, then the other
 * supporting sentences, each cited as [Data: Sources (ids); Entities (ids)].
 */

import { idList, sentences, stripCaptions } from "../text.ts";
import type { EntityRow } from "../types.ts";
import type { LocalContext } from "./local-context.ts";
import { NO_DATA_ANSWER } from "./prompts.ts";
import { nameWords, subjectOf } from "./subject.ts";
import { queryTerms, stem } from "./terms.ts";

const SUPPORTING = 3;
/** The answer reads the first in-context sources: those of the best-matched entities. */
const MAX_SOURCES = 12;
const MAX_TIES = 3;

type Asks = "place" | "time" | "person" | "reason" | "count" | "thing";

/** What a question asks for, from its question word. */
export function asksFor(query: string): Asks {
  const q = query.trim().toLowerCase();
  if (/^(where|whither|whence)\b|\bwhere (does|did|is|was|do)\b/.test(q)) return "place";
  if (/^when\b|\bwhat (time|year|day|date)\b/.test(q)) return "time";
  if (/^(who|whom|whose)\b/.test(q)) return "person";
  if (/^why\b/.test(q)) return "reason";
  if (/^how (many|much|old|long)\b/.test(q)) return "count";
  return "thing";
}

/** Everyday equivalents of question words, so a question need not use the book's own word. */
const EQUIVALENTS: Record<string, string[]> = {
  live: [
    "home",
    "house",
    "lives",
    "lived",
    "dwell",
    "dwelt",
    "dwelling",
    "residence",
    "lodging",
    "lodgings",
    "rooms",
  ],
  home: ["house", "live", "lived"],
  work: ["clerk", "office", "business", "employ", "employer", "master", "works", "worked"],
  job: ["clerk", "office", "business", "employ"],
  die: ["dead", "death", "died", "grave", "dies"],
  dead: ["die", "death", "died", "grave"],
  eat: ["dinner", "goose", "pudding", "feast", "supper", "ate"],
  dinner: ["goose", "pudding", "feast", "supper"],
  marry: ["married", "wife", "husband", "wedding"],
  wife: ["married", "husband"],
  money: ["pay", "shillings", "pounds", "wages", "wealth", "rich", "poor"],
  friend: ["friends", "partner", "companion"],
};
const PLACE_NOUNS = new Set(
  "home house room rooms street town city office shop lane yard hall church school chambers lodgings".split(
    " ",
  ),
);
const TIME_WORDS = new Set(
  "christmas eve day night morning evening midnight clock hour year years week month time o'clock yesterday tomorrow".split(
    " ",
  ),
);
const REASON_WORDS = new Set(["because", "for", "since", "so", "therefore", "reason", "cause"]);

interface Scored {
  text: string;
  score: number;
  source: number;
  entities: number[];
  order: number;
}

export function extractiveAnswer(context: LocalContext, query: string, neighbours: EntityRow[] = []): string {
  const subject = subjectOf(context.entities, query);
  const asks = asksFor(query);
  const subjectWords = subject ? nameWords(subject.name).filter((w) => w.length > 2) : [];
  const terms = queryTerms(query).filter((t) => !subjectWords.includes(t));
  const wanted = new Set(terms.map(stem));
  const equivalent = new Set(terms.flatMap((t) => EQUIVALENTS[t] ?? EQUIVALENTS[stem(t)] ?? []).map(stem));
  const known = [...context.entities, ...neighbours];
  const places = known.filter((e) => e.type === "geo").map((e) => e.name.toLowerCase());
  const named = context.entities.slice(0, 5);

  const scored: Scored[] = [];
  let order = 0;
  const seen = new Set<string>();
  // Words a sentence must contain one of to be worth scoring (most sentences of a long context are not).
  const cues = [
    ...subjectWords,
    ...terms.map(stem),
    ...equivalent,
    ...(asks === "place" ? [...places, ...PLACE_NOUNS] : []),
  ].filter((w) => w.length > 1);
  for (const source of context.sources.slice(0, MAX_SOURCES)) {
    for (const raw of sentences(stripCaptions(source.text))) {
      const text = raw.trim();
      if (text.length < 20 || seen.has(text)) continue;
      seen.add(text);
      const lower = text.toLowerCase();
      if (!cues.some((c) => lower.includes(c))) continue;
      const words = (lower.match(/[\p{L}\p{N}']+/gu) ?? []).map(stem);
      let score = 0;
      if (subject) {
        if (lower.includes(subject.name.toLowerCase())) score += 3;
        else if (subjectWords.some((w) => words.includes(stem(w)))) score += 2;
      }
      for (const w of new Set(words)) {
        if (wanted.has(w)) score += 1.5;
        else if (equivalent.has(w)) score += 1;
      }
      if (asks === "place") {
        if (places.some((p) => lower.includes(p))) score += 3;
        if (words.some((w) => PLACE_NOUNS.has(w))) score += 1;
      } else if (asks === "time") {
        if (words.some((w) => TIME_WORDS.has(w)) || /\d/.test(text)) score += 1.5;
      } else if (asks === "person" && subject) {
        // "Bob Cratchit, clerk to Ebenezer Scrooge": a sentence that describes the subject.
        const name = subject.name.toLowerCase();
        if (
          lower.startsWith(`${name},`) ||
          new RegExp(`${escapeRegExp(name)},? (is|was|the|a|an) `).test(lower)
        )
          score += 2;
      } else if (asks === "reason") {
        if (words.some((w) => REASON_WORDS.has(w))) score += 1;
      } else if (asks === "count") {
        if (/\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|twenty|hundred)\b/.test(lower))
          score += 1;
      }
      // A question or a fragment without a full stop (a heading, a list of plates) answers nothing.
      if (/\?["'’”)]*$/.test(text)) score -= 1.5;
      else if (!/[.!;]["'’”)_]*$/.test(text)) score -= 1.5;
      if (text.length < 150) score += 0.5;
      // "said Bob, with a sudden declension...": the tail of a quotation is no way to open an answer.
      if (/^[a-z]/.test(text)) score -= 1;
      if (text.length > 300) score -= 1;
      if (text.length > 500) score -= 1;
      if (score <= 0) continue;
      const mentioned = named.filter((e) => lower.includes(e.name.toLowerCase())).map((e) => e.human_id);
      scored.push({ text, score, source: source.id, entities: mentioned, order: order++ });
    }
  }
  scored.sort((a, b) => b.score - a.score || a.order - b.order);
  const [lead, ...rest] = scored;
  if (!lead) return NO_DATA_ANSWER;

  const parts = [`${lead.text} ${cite(lead)}`];
  if (subject) {
    const ties = context.relationships
      .filter((r) => r.source_id === subject.id || r.target_id === subject.id)
      .sort((a, b) => b.weight - a.weight)
      .slice(0, MAX_TIES);
    const others = ties.map((r) => (r.source_id === subject.id ? r.target : r.source));
    const about = `${subject.name} (${subject.type}) [Data: Entities (${subject.human_id})]`;
    parts.push(
      others.length > 0
        ? `${about} is most closely tied to ${list(others)} [Data: Relationships (${idList(ties.map((r) => r.human_id))})].`
        : `${about}.`,
    );
  }
  const supporting = rest.slice(0, SUPPORTING);
  if (supporting.length > 0)
    parts.push(`Supporting passages:\n\n${supporting.map((s) => `- "${s.text}" ${cite(s)}`).join("\n")}`);
  return parts.join("\n\n");
}

function cite(s: Scored): string {
  const refs = [`Sources (${s.source})`];
  if (s.entities.length > 0) refs.push(`Entities (${idList(s.entities)})`);
  return `[Data: ${refs.join("; ")}]`;
}

function list(names: string[]): string {
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names.at(-1)}` : (names[0] ?? "");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
