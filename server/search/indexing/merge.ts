/**
 * Merges what extraction found unit by unit into one graph: names are matched case-insensitively (and
 * "Mr. Scrooge" joins "Scrooge" when both exist), types go by majority, descriptions are the distinct
 * ones joined (capped), relationships are undirected with their weights summed. Entities seen fewer than
 * `minMentions` times are dropped with their relationships (the offline extractor's guard against
 * one-off capitalised words).
 */

import { clip } from "../text.ts";
import type { ExtractionRecord, MergedEntity, MergedRelationship } from "../types.ts";

const MAX_DESCRIPTIONS = 4;
const MAX_DESCRIPTION_CHARS = 1200;
/** Honorifics that name the same person as the bare name (unlike "Mrs.": Mrs. Cratchit is not Cratchit). */
const ANY_HONORIFIC =
  /^(MRS?\.?|MS\.?|MISS|SIR|DR\.?|LADY|LORD|MASTER|MADAM|UNCLE|AUNT|CAPTAIN|COLONEL|GOVERNOR|PROFESSOR|REV\.?|REVEREND) /;
const SAME_PERSON_HONORIFIC =
  /^(MR\.?|SIR|DR\.?|MASTER|UNCLE|MISS|CAPTAIN|COLONEL|PROFESSOR|REV\.?|REVEREND) /;

export function nameKey(name: string): string {
  return name.replace(/\s+/g, " ").replace(/["“”]/g, "").trim().toUpperCase();
}

interface Accumulator {
  names: Map<string, number>;
  types: Map<string, number>;
  descriptions: string[];
  mentions: number;
  units: Set<number>;
  /** The name to show when aliases were merged. */
  display?: string;
  displayWeight?: number;
}

export function mergeGraph(
  records: ExtractionRecord[],
  minMentions = 1,
): { entities: MergedEntity[]; relationships: MergedRelationship[] } {
  const acc = new Map<string, Accumulator>();
  // Names recur thousands of times in a large index: each is keyed once.
  const keys = new Map<string, string>();
  const keyOf = (name: string) => {
    let key = keys.get(name);
    if (key === undefined) {
      key = nameKey(name);
      keys.set(name, key);
    }
    return key;
  };
  const touch = (name: string) => {
    const key = keyOf(name);
    let entry = acc.get(key);
    if (!entry) {
      entry = { names: new Map(), types: new Map(), descriptions: [], mentions: 0, units: new Set() };
      acc.set(key, entry);
    }
    return { key, entry };
  };
  for (const r of records) {
    if (r.kind !== "entity") continue;
    const { entry } = touch(r.name);
    entry.names.set(r.name, (entry.names.get(r.name) ?? 0) + 1);
    if (r.type) entry.types.set(r.type, (entry.types.get(r.type) ?? 0) + 1);
    addDescription(entry.descriptions, r.description);
    entry.mentions += r.weight > 0 ? r.weight : 1;
    entry.units.add(r.unit_id);
  }
  // "MR. SCROOGE" and "UNCLE SCROOGE" are "SCROOGE" when the bare name is known; "MRS. CRATCHIT" stays
  // her own person.
  const alias = new Map<string, string>();
  const absorb = (from: string, to: string) => {
    const source = acc.get(from) as Accumulator;
    const target = acc.get(to) as Accumulator;
    alias.set(from, to);
    for (const [t, c] of source.types) target.types.set(t, (target.types.get(t) ?? 0) + c);
    for (const [n, c] of source.names) target.names.set(n, (target.names.get(n) ?? 0) + c);
    for (const d of source.descriptions) addDescription(target.descriptions, d);
    target.mentions += source.mentions;
    for (const u of source.units) target.units.add(u);
    acc.delete(from);
  };
  for (const key of [...acc.keys()]) {
    const bare = key.replace(SAME_PERSON_HONORIFIC, "");
    if (bare !== key && acc.has(bare)) absorb(key, bare);
  }
  // A one-word name that begins or ends exactly one longer name of the same type is that name ("TIM" in
  // "TINY TIM", "SCROOGE" in "EBENEZER SCROOGE"); when several longer names share it ("CRATCHIT"), it stays
  // ambiguous and on its own. Figures ("GHOST OF JACOB MARLEY") are not full names of their parts. The
  // merged entity shows the full name unless the short one is far more usual ("Scrooge").
  // Full names listed under their first and last word, so each one-word name looks up only the names it
  // could belong to (scanning every longer name for every one-word name took most of a merge).
  const longerByWord = new Map<string, string[]>();
  for (const k of acc.keys()) {
    if (!k.includes(" ") || k.includes(" OF ")) continue;
    // "MRS. FEZZIWIG" is not the full name of "FEZZIWIG", but "MASTER PETER CRATCHIT" is of "PETER".
    const bare = k.replace(SAME_PERSON_HONORIFIC, "");
    if (bare !== bare.replace(ANY_HONORIFIC, "")) continue;
    const words = bare.split(" ");
    if (words.length < 2) continue;
    for (const word of new Set([words[0] as string, words.at(-1) as string])) {
      const list = longerByWord.get(word);
      if (list) list.push(k);
      else longerByWord.set(word, [k]);
    }
  }
  for (const key of [...acc.keys()]) {
    if (key.includes(" ")) continue;
    const entry = acc.get(key) as Accumulator;
    const type = top(entry.types);
    const holders = (longerByWord.get(key) ?? []).filter((k) => {
      const candidate = acc.get(k);
      return candidate !== undefined && candidate.mentions >= minMentions;
    });
    const holderKey = holders.length === 1 ? (holders[0] as string) : undefined;
    const holder = holderKey ? acc.get(holderKey) : undefined;
    if (!holder || !holderKey || top(holder.types) !== type) continue;
    // A short name far more frequent than the long one is its own thing ("SPIRIT" vs "EVIL SPIRIT"),
    // unless both are people: then it is the usual form of the full name.
    if (type !== "person" && entry.mentions > 4 * holder.mentions) continue;
    if (entry.mentions > 8 * holder.mentions && entry.mentions > (holder.displayWeight ?? 0)) {
      holder.display = nameOf(key, entry);
      holder.displayWeight = entry.mentions;
    }
    absorb(key, holderKey);
  }
  const resolve = (name: string) => {
    let key = keyOf(name);
    for (let hops = 0; alias.has(key) && hops < 4; hops++) key = alias.get(key) as string;
    return key;
  };

  const rels = new Map<string, MergedRelationship & { descriptions: string[]; units: Set<number> }>();
  for (const r of records) {
    if (r.kind !== "relationship" || !r.target) continue;
    let [a, b] = [resolve(r.name), resolve(r.target)];
    if (a === b) continue;
    if (b < a) [a, b] = [b, a];
    // A relationship may name an entity that was never listed on its own: it exists all the same.
    for (const key of [a, b]) {
      if (!acc.has(key)) {
        const { entry } = touch(key);
        entry.names.set(key, 1);
        entry.mentions++;
        entry.units.add(r.unit_id);
      }
    }
    const id = `${a}\u0000${b}`;
    let rel = rels.get(id);
    if (!rel) {
      rel = {
        source: a,
        target: b,
        description: "",
        weight: 0,
        unitIds: [],
        rank: 0,
        descriptions: [],
        units: new Set(),
      };
      rels.set(id, rel);
    }
    rel.weight += r.weight;
    addDescription(rel.descriptions, r.description);
    rel.units.add(r.unit_id);
  }

  const kept = new Set<string>();
  for (const [key, entry] of acc) if (entry.mentions >= minMentions) kept.add(key);
  const degree = new Map<string, number>();
  const relationships: MergedRelationship[] = [];
  for (const rel of rels.values()) {
    if (!kept.has(rel.source) || !kept.has(rel.target)) continue;
    degree.set(rel.source, (degree.get(rel.source) ?? 0) + 1);
    degree.set(rel.target, (degree.get(rel.target) ?? 0) + 1);
    relationships.push({
      source: rel.source,
      target: rel.target,
      description: joinDescriptions(rel.descriptions),
      weight: rel.weight,
      unitIds: [...rel.units].sort((x, y) => x - y),
      rank: 0,
    });
  }
  for (const rel of relationships) rel.rank = (degree.get(rel.source) ?? 0) + (degree.get(rel.target) ?? 0);

  const entities: MergedEntity[] = [];
  for (const key of [...kept].sort()) {
    const entry = acc.get(key) as Accumulator;
    entities.push({
      key,
      name: entry.display ?? nameOf(key, entry),
      type: top(entry.types) ?? "person",
      description: joinDescriptions(leadsFirst(entry.descriptions, [...entry.names.keys()])),
      mentions: entry.mentions,
      unitIds: [...entry.units].sort((x, y) => x - y),
      degree: degree.get(key) ?? 0,
    });
  }
  relationships.sort((x, y) =>
    x.source === y.source ? x.target.localeCompare(y.target) : x.source.localeCompare(y.source),
  );
  return { entities, relationships };
}

/** Descriptions that open with one of the entity's names ("Ebenezer Scrooge, a grasping...") first. */
function leadsFirst(descriptions: string[], names: string[]): string[] {
  const opens = (d: string) => names.some((n) => d.replace(/^[\s"'“‘(_]+/, "").startsWith(n));
  return [...descriptions.filter(opens), ...descriptions.filter((d) => !opens(d))];
}

/** The written form of a key: the one that is exactly the key, else the most frequent. */
function nameOf(key: string, entry: Accumulator): string {
  for (const name of entry.names.keys()) if (nameKey(name) === key) return name;
  return top(entry.names) ?? key;
}

function addDescription(list: string[], description: string) {
  const text = description.trim();
  if (text && list.length < MAX_DESCRIPTIONS * 2 && !list.includes(text)) list.push(text);
}

/** Whole descriptions while they fit (a sentence is never cut and restarted); the first, if alone too long, clipped at a word. */
function joinDescriptions(list: string[]): string {
  const kept: string[] = [];
  let length = 0;
  for (const d of list.slice(0, MAX_DESCRIPTIONS)) {
    if (kept.length > 0 && length + 1 + d.length > MAX_DESCRIPTION_CHARS) break;
    kept.push(d);
    length += d.length + 1;
  }
  return clip(kept.join(" "), MAX_DESCRIPTION_CHARS);
}

function top(counts: Map<string, number>): string | undefined {
  let best: string | undefined;
  let bestCount = -1;
  for (const [value, count] of counts) {
    if (count > bestCount || (count === bestCount && best !== undefined && value < best)) {
      best = value;
      bestCount = count;
    }
  }
  return best;
}
