/**
 * Sources at the grain of sentences. A text unit is ~1,200 tokens and a context's source budget holds
 * only a handful, while the sentence that answers a question often sits in the tenth unit of the pool.
 * So a context gives each unit as the windows around its best passages (each passage with the sentence
 * before and after it, overlapping windows merged, in the unit's order, " … " between them), and the
 * same budget holds the answering sentences of many more units. Sentences are cut only where the unit's
 * sentence splitter cuts them and never repeated; a row keeps its unit's id, so a citation of the unit
 * names a row that holds the cited sentence. A unit none of whose sentences ranks is given whole.
 */
import { estimateTokens } from "../text.ts";
import type { Passage } from "./passages.ts";
import { unitWords } from "./unit-words.ts";

/** Sentences either side of a passage that its window holds. */
const REACH = 1;
/** Between two windows of one unit. */
export const GAP = " … ";

export interface SourceUnit {
  id: number;
  text: string;
  tokens: number;
}

export interface SourceText {
  id: number;
  text: string;
  tokens: number;
  /** The unit whole (none of its sentences ranked), not windows. */
  whole: boolean;
}

/**
 * The ranked units as a context gives them: whole while they fit `whole` tokens (the best units, read as
 * they are: an answer there may share no word with the question), then the windows around their
 * passages; a unit with no passage, or one an answer cites (its citation names all it says), whole.
 */
export function sourceTexts(
  ranked: number[],
  units: Map<number, SourceUnit>,
  passages: Passage[],
  whole: number,
  cited: Set<number> = new Set(),
): SourceText[] {
  const byUnit = new Map<number, Passage[]>();
  for (const p of passages) byUnit.set(p.unit, [...(byUnit.get(p.unit) ?? []), p]);
  let used = 0;
  let windows = false;
  const out: SourceText[] = [];
  for (const id of ranked) {
    const unit = units.get(id);
    if (!unit) continue;
    windows ||= used + unit.tokens > whole;
    const text = windows && !cited.has(id) ? windowsOf(unit.text, byUnit.get(id) ?? []) : undefined;
    if (text === undefined) {
      used += unit.tokens;
      out.push({ id, text: unit.text, tokens: unit.tokens, whole: true });
    } else out.push({ id, text, tokens: estimateTokens(text), whole: false });
  }
  return out;
}

/** A unit's sentences around these passages, merged and in order; undefined when none is found. */
export function windowsOf(text: string, passages: Passage[], reach = REACH): string | undefined {
  const list = unitWords(text).list.map((s) => s.trim());
  const at = new Map<string, number>();
  list.forEach((s, i) => {
    if (!at.has(s)) at.set(s, i);
  });
  const kept = new Set<number>();
  for (const p of passages) {
    // A question passage carries the sentence that answers it ("…, Spirit?' 'More than…'"): both count.
    const i = at.get(p.text) ?? list.findIndex((s) => p.text.startsWith(`${s} `));
    if (i < 0) continue;
    const last = p.text === list[i] ? i : i + 1;
    for (let k = Math.max(0, i - reach); k <= Math.min(list.length - 1, last + reach); k++) kept.add(k);
  }
  if (kept.size === 0) return undefined;
  const order = [...kept].sort((a, b) => a - b);
  return order
    .map((k, j) => (j === 0 ? "" : k === (order[j - 1] as number) + 1 ? " " : GAP) + list[k])
    .join("");
}
