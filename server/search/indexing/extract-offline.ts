/**
 * The offline extractor: deterministic entity and relationship extraction with wink-nlp (no model).
 *
 * wink's English lite model tags parts of speech but names no people or places, so names are runs of
 * capitalised proper nouns (with an honorific such as "Mrs." kept), typed by cues: organisation words,
 * event words, place words or a locative preposition before the name, else a person. A capitalised word
 * the document mostly writes in lower case ("Good", "Ghost") is an ordinary word at a sentence start, not a
 * name. Entities that share a sentence are related; each shared sentence adds 1 to the weight and the
 * sentences that mention a name become its description.
 */

import model from "wink-eng-lite-web-model";
import winkNLP, { type ItemSentence, type WinkMethods } from "wink-nlp";
import type { ExtractedEntity, ExtractedRelationship, Extraction } from "../types.ts";

let nlp: WinkMethods | undefined;
function engine(): WinkMethods {
  nlp ??= winkNLP(model);
  return nlp;
}

const HONORIFICS = new Set([
  "Mr.",
  "Mrs.",
  "Miss",
  "Ms.",
  "Dr.",
  "Mr",
  "Mrs",
  "Ms",
  "Dr",
  "Sir",
  "Lady",
  "Lord",
  "Master",
]);
const ORGANIZATION_WORDS = new Set(
  "Company Co. Co Bank Society Corporation Firm Inc. Inc Ltd. Ltd Church Parliament Council Committee University College Institute Association Union Ministry Department Party Guild Exchange Army Navy".split(
    " ",
  ),
);
const EVENT_WORDS = new Set(
  "Christmas Eve Day Sunday Monday Tuesday Wednesday Thursday Friday Saturday Year War Battle Festival Feast Revolution".split(
    " ",
  ),
);
const PLACE_WORDS = new Set(
  "Street Lane Road Square Hill City Town Court Park River Bridge Market Yard Row Place Alley England London France Camden Cornhill".split(
    " ",
  ),
);
const LOCATIVE = new Set(["in", "at", "from", "into", "near", "towards", "through", "across"]);
/** Formatting words of digitised books and interjections that are capitalised but never names. */
const NOT_NAMES = new Set(
  "Illustration Tailpiece Chapter Stave Book Part Volume Oh Ah Ha Hallo Halloa Yes No Well Why".split(" "),
);

const MAX_DESCRIPTION_SENTENCES = 2;
const MAX_SENTENCE_CHARS = 400;
const MAX_NAMES_PER_SENTENCE = 8;

/** How often each word appears capitalised and in lower case across a document. */
export function caseStats(text: string): Map<string, { lower: number; upper: number }> {
  const stats = new Map<string, { lower: number; upper: number }>();
  for (const match of text.matchAll(/[A-Za-z][A-Za-z'’-]*/g)) {
    const word = match[0];
    const key = word.toLowerCase();
    let entry = stats.get(key);
    if (!entry) {
      entry = { lower: 0, upper: 0 };
      stats.set(key, entry);
    }
    if (word[0] === word[0]?.toLowerCase()) entry.lower++;
    else entry.upper++;
  }
  return stats;
}

interface Mention {
  name: string;
  type: string;
}

/** Extracts one unit; `stats` come from the whole document (see caseStats). */
export function extractOffline(text: string, stats: ReturnType<typeof caseStats>): Extraction {
  const its = engine().its;
  const doc = engine().readDoc(text);
  const entities = new Map<string, ExtractedEntity & { sentences: number; mentions: number }>();
  const relationships = new Map<string, ExtractedRelationship>();
  doc.sentences().each((sentence: ItemSentence) => {
    const words = sentence.tokens().out() as string[];
    const tags = sentence.tokens().out(its.pos) as string[];
    const mentions = namesIn(words, tags, stats);
    if (mentions.length === 0) return;
    const said = tidy(sentence.out() as string);
    for (const mention of mentions) {
      const entity = entities.get(mention.name);
      if (!entity) {
        entities.set(mention.name, {
          name: mention.name,
          type: mention.type,
          description: said,
          sentences: 1,
          mentions: 1,
        });
        continue;
      }
      entity.mentions++;
      if (entity.sentences < MAX_DESCRIPTION_SENTENCES && !entity.description.includes(said)) {
        entity.description += ` ${said}`;
        entity.sentences++;
      }
    }
    const distinct = [...new Set(mentions.map((m) => m.name))].slice(0, MAX_NAMES_PER_SENTENCE);
    for (let i = 0; i < distinct.length; i++) {
      for (let j = i + 1; j < distinct.length; j++) {
        const [source, target] = [distinct[i] as string, distinct[j] as string].sort();
        const key = `${source}\u0000${target}`;
        const existing = relationships.get(key);
        if (existing) existing.weight++;
        else
          relationships.set(key, {
            source: source as string,
            target: target as string,
            description: said,
            weight: 1,
          });
      }
    }
  });
  return {
    entities: [...entities.values()].map(({ name, type, description, mentions }) => ({
      name,
      type,
      description,
      mentions,
    })),
    relationships: [...relationships.values()],
  };
}

function namesIn(words: string[], tags: string[], stats: ReturnType<typeof caseStats>): Mention[] {
  const mentions: Mention[] = [];
  let run: string[] = [];
  let runStart = 0;
  const flush = (end: number) => {
    const mention = nameOf(run, words[runStart - 1], words[end], stats);
    if (mention) mentions.push(mention);
    run = [];
  };
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    const isName = tags[i] === "PROPN" && /^[A-Z]/.test(word);
    if (isName) {
      if (run.length === 0) runStart = i;
      run.push(word);
    } else if (run.length > 0) flush(i);
  }
  if (run.length > 0) flush(words.length);
  return mentions;
}

function nameOf(
  run: string[],
  before: string | undefined,
  after: string | undefined,
  stats: ReturnType<typeof caseStats>,
): Mention | undefined {
  let parts = run.map((w) => w.replace(/['’]s$/, "")).filter((w) => w.length > 0);
  // Headings and shouting ("STAVE ONE", "MARLEY'S GHOST") are not mentions.
  if (parts.some((w) => w.length > 1 && w === w.toUpperCase())) return undefined;
  const honorific = parts[0] && HONORIFICS.has(parts[0]) ? parts[0] : undefined;
  const core = honorific ? parts.slice(1) : parts;
  // "Old Jacob Marley", "Whereat Scrooge": a leading word the document mostly writes in lower case is
  // not part of the name.
  while (core.length > 1 && isCommonWord(core[0] as string, stats)) core.shift();
  if (core.length === 0 || core.some((w) => NOT_NAMES.has(w) || w.length < 2 || /['’]/.test(w)))
    return undefined;
  if (core.length === 1 && !honorific && isCommonWord(core[0] as string, stats)) return undefined;
  parts = honorific
    ? [honorific.endsWith(".") || honorific.length > 3 ? honorific : `${honorific}.`, ...core]
    : core;
  return { name: parts.join(" "), type: typeOf(core, honorific, before, after) };
}

function isCommonWord(word: string, stats: ReturnType<typeof caseStats>): boolean {
  const seen = stats.get(word.toLowerCase());
  return seen !== undefined && seen.lower >= seen.upper;
}

function typeOf(
  core: string[],
  honorific: string | undefined,
  before: string | undefined,
  after: string | undefined,
) {
  if (honorific) return "person";
  if (core.some((w) => ORGANIZATION_WORDS.has(w)) || after === "&") return "organization";
  if (core.some((w) => EVENT_WORDS.has(w))) return "event";
  if (core.some((w) => PLACE_WORDS.has(w))) return "geo";
  if (before && LOCATIVE.has(before.toLowerCase()) && core.length === 1) return "geo";
  return "person";
}

function tidy(sentence: string): string {
  const flat = sentence.replace(/\s+/g, " ").trim();
  return flat.length > MAX_SENTENCE_CHARS ? `${flat.slice(0, MAX_SENTENCE_CHARS)}…` : flat;
}
