/**
 * The offline extractor: deterministic entity and relationship extraction without a model.
 *
 * Two passes. First the whole document is profiled: every name it mentions (names.ts) with the cues
 * around each mention, so a name is typed once from all its evidence rather than from one sentence:
 * an honorific or a speech verb ("said Scrooge") makes a person, a head word makes an organisation
 * ("Pennsylvania Gazette") or a place ("Camden Town"), a figure word a personified character ("the Ghost
 * of Christmas Past"), a feast or weekday an event; a word mostly written with an article and no person
 * cue is a thing, not a name ("the Law"), and a lone word seen capitalised only at sentence starts is
 * dropped. Then each text unit lists the profiled names it mentions: entities described by the
 * sentences that mention them, related when they share a sentence (each shared sentence adds 1 to the
 * weight). Plain string scanning: no tagger to load, so indexing runs at tokenizer speed.
 */

import { clip, sentences, stripCaptions } from "../text.ts";
import type { ExtractedEntity, ExtractedRelationship, Extraction } from "../types.ts";
import { nameKey } from "./merge.ts";
import {
  type CaseStats,
  caseStats,
  EVENT_WORDS,
  FIGURE_WORDS,
  GAZETTEER,
  mentionsIn,
  type NameMention,
  ORGANIZATION_WORDS,
  PLACE_WORDS,
} from "./names.ts";

const MAX_DESCRIPTION_SENTENCES = 2;
const MAX_SENTENCE_CHARS = 400;
const MAX_NAMES_PER_SENTENCE = 8;

export interface DocumentProfile {
  stats: CaseStats;
  /** Name key → entity type, for every name worth keeping. */
  types: Map<string, string>;
}

interface Evidence {
  core: string[];
  honorific?: string;
  mentions: number;
  inside: number;
  honorifics: number;
  speech: number;
  locative: number;
  article: number;
  adjective: number;
}

/** Reads the whole document once and types every name it mentions. */
export function profileDocument(text: string): DocumentProfile {
  const stats = caseStats(text);
  const evidence = new Map<string, Evidence>();
  for (const sentence of sentences(stripCaptions(text))) {
    for (const m of mentionsIn(sentence, stats)) {
      const key = nameKey(m.name);
      let e = evidence.get(key);
      if (!e) {
        e = {
          core: m.core,
          honorific: m.honorific,
          mentions: 0,
          inside: 0,
          honorifics: 0,
          speech: 0,
          locative: 0,
          article: 0,
          adjective: 0,
        };
        evidence.set(key, e);
      }
      count(e, m);
    }
  }
  const types = new Map<string, string>();
  for (const [key, e] of evidence) {
    const type = typeFrom(e);
    if (type) types.set(key, type);
  }
  return { stats, types };
}

function count(e: Evidence, m: NameMention) {
  e.mentions++;
  if (!m.atStart) e.inside++;
  for (const cue of m.cues) {
    if (cue === "honorific") e.honorifics++;
    else if (cue === "speech") e.speech++;
    else if (cue === "locative") e.locative++;
    else if (cue === "article") e.article++;
    else e.adjective++;
  }
}

/** The type a name's evidence supports, or undefined when it does not look like a name at all. */
export function typeFrom(e: Evidence): string | undefined {
  const words = e.core.filter((w) => w !== "of");
  if (e.honorific) return "person";
  if (FIGURE_WORDS.has(words[0] as string)) return "person";
  if (words.some((w) => ORGANIZATION_WORDS.has(w))) return "organization";
  if (words.some((w) => PLACE_WORDS.has(w)) || words.every((w) => GAZETTEER.has(w))) return "geo";
  if (words.some((w) => EVENT_WORDS.has(w))) return "event";
  const person = e.speech + e.adjective + e.honorifics;
  if (e.locative > person && e.locative * 3 >= e.mentions) return "geo";
  if (person > 0) return "person";
  if (e.article * 2 > e.mentions) return undefined;
  if (words.length >= 2) return "person";
  return e.inside >= 2 ? "person" : undefined;
}

interface Found extends ExtractedEntity {
  mentions: number;
  /** Sentences that open with the name ("Bob Cratchit, clerk to Ebenezer Scrooge."): the best descriptions. */
  leads: string[];
  others: string[];
}

/** Extracts one unit of a profiled document. */
export function extractOffline(text: string, profile: DocumentProfile): Extraction {
  const entities = new Map<string, Found>();
  const relationships = new Map<string, ExtractedRelationship>();
  for (const sentence of sentences(stripCaptions(text))) {
    const names: string[] = [];
    const said = tidy(sentence);
    const opening = said.replace(/^[\s"'“‘(_]+/, "");
    // A heading or a list line (no full stop) describes nothing well: it goes last.
    const complete = /[.!?]["'’”)_]*$/.test(said);
    for (const m of mentionsIn(sentence, profile.stats)) {
      const type = profile.types.get(nameKey(m.name));
      if (!type) continue;
      names.push(m.name);
      let entity = entities.get(m.name);
      if (!entity) {
        entity = { name: m.name, type, description: "", mentions: 0, leads: [], others: [] };
        entities.set(m.name, entity);
      }
      entity.mentions++;
      const list = complete && opening.startsWith(m.name) ? entity.leads : entity.others;
      if (list.length < MAX_DESCRIPTION_SENTENCES && !list.includes(said)) {
        if (complete || list !== entity.others) list.push(said);
        else if (entity.others.length === 0) entity.others.push(said);
      }
    }
    const distinct = [...new Set(names)].slice(0, MAX_NAMES_PER_SENTENCE);
    for (let i = 0; i < distinct.length; i++) {
      for (let j = i + 1; j < distinct.length; j++) {
        const [source, target] = [distinct[i] as string, distinct[j] as string].sort() as [string, string];
        if (nameKey(source) === nameKey(target)) continue;
        const key = `${source}\u0000${target}`;
        const existing = relationships.get(key);
        if (!existing) relationships.set(key, { source, target, description: said, weight: 1 });
        else {
          existing.weight++;
          // A complete sentence of readable length describes the tie better than a list line or a page.
          if (complete && said.length <= 300 && !readable(existing.description)) existing.description = said;
        }
      }
    }
  }
  return {
    entities: [...entities.values()].map(({ name, type, mentions, leads, others }) => ({
      name,
      type,
      description: [...leads, ...others].slice(0, MAX_DESCRIPTION_SENTENCES).join(" "),
      mentions,
    })),
    relationships: [...relationships.values()],
  };
}

function readable(sentence: string): boolean {
  return sentence.length <= 300 && /[.!?]["'’”)_]*$/.test(sentence);
}

function tidy(sentence: string): string {
  const flat = sentence.replace(/\s+/g, " ").trim();
  return clip(flat, MAX_SENTENCE_CHARS);
}
