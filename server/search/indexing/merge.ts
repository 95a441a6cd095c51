/**
 * Merges what extraction found unit by unit into one graph: names are matched case-insensitively (and
 * "Mr. Scrooge" joins "Scrooge" when both exist), types go by majority, descriptions are the distinct
 * ones joined (capped), relationships are undirected with their weights summed. Entities seen fewer than
 * `minMentions` times are dropped with their relationships (the offline extractor's guard against
 * one-off capitalised words).
 */

import type { ExtractionRecord, MergedEntity, MergedRelationship } from "../types.ts";

const MAX_DESCRIPTIONS = 4;
const MAX_DESCRIPTION_CHARS = 1200;
const MALE_HONORIFIC = /^(MR\.?|SIR|DR\.?|MASTER) /;

export function nameKey(name: string): string {
  return name.replace(/\s+/g, " ").replace(/["“”]/g, "").trim().toUpperCase();
}

interface Accumulator {
  names: Map<string, number>;
  types: Map<string, number>;
  descriptions: string[];
  mentions: number;
  units: Set<number>;
}

export function mergeGraph(
  records: ExtractionRecord[],
  minMentions = 1,
): { entities: MergedEntity[]; relationships: MergedRelationship[] } {
  const acc = new Map<string, Accumulator>();
  const touch = (name: string) => {
    const key = nameKey(name);
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
  // "MR. SCROOGE" is "SCROOGE" when the bare name is known; "MRS. CRATCHIT" stays her own person.
  const alias = new Map<string, string>();
  const absorb = (from: string, to: string) => {
    const source = acc.get(from) as Accumulator;
    const target = acc.get(to) as Accumulator;
    alias.set(from, to);
    for (const [t, c] of source.types) target.types.set(t, (target.types.get(t) ?? 0) + c);
    for (const d of source.descriptions) addDescription(target.descriptions, d);
    target.mentions += source.mentions;
    for (const u of source.units) target.units.add(u);
    acc.delete(from);
  };
  for (const key of [...acc.keys()]) {
    const bare = key.replace(MALE_HONORIFIC, "");
    if (bare !== key && acc.has(bare)) absorb(key, bare);
  }
  // A one-word name that is part of exactly one longer name of the same type is that name ("TIM" in
  // "TINY TIM"); when several longer names share it ("CRATCHIT"), it stays ambiguous and on its own.
  const longer = [...acc.keys()].filter((k) => k.includes(" "));
  for (const key of [...acc.keys()]) {
    if (key.includes(" ")) continue;
    const type = top((acc.get(key) as Accumulator).types);
    const holders = longer.filter((k) => acc.has(k) && k.split(" ").includes(key));
    const holder = holders.length === 1 ? acc.get(holders[0] as string) : undefined;
    // A short name far more frequent than the long one is its own thing ("SPIRIT" vs "EVIL SPIRIT").
    const entry = acc.get(key) as Accumulator;
    if (holder && top(holder.types) === type && entry.mentions <= 4 * holder.mentions) {
      absorb(key, holders[0] as string);
    }
  }
  const resolve = (name: string) => {
    let key = nameKey(name);
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
      name: top(entry.names) ?? key,
      type: top(entry.types) ?? "person",
      description: joinDescriptions(entry.descriptions),
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

function addDescription(list: string[], description: string) {
  const text = description.trim();
  if (text && list.length < MAX_DESCRIPTIONS * 2 && !list.includes(text)) list.push(text);
}

function joinDescriptions(list: string[]): string {
  const joined = list.slice(0, MAX_DESCRIPTIONS).join(" ");
  return joined.length > MAX_DESCRIPTION_CHARS ? `${joined.slice(0, MAX_DESCRIPTION_CHARS)}…` : joined;
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
