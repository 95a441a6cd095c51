/**
 * What the passage answerer remembers of the texts it reads: each unit's sentences and stems (by its
 * text), its case counts, and a pool's joined case counts with each text's mentions (by the pool's texts).
 * Keyed by text, never by id, so a changed or removed unit is never served stale words.
 */
import { type CasePart, type CaseStats, casePart, joinCases, type mentionsIn } from "../indexing/names.ts";
import { sentences, stripCaptions } from "../text.ts";
import { stem, wordsOf } from "./terms.ts";

/** A unit's sentences, each sentence's stems, and the whole unit's stems. */
interface UnitWords {
  list: string[];
  bags: Set<string>[];
  whole: Set<string>;
  /** The stems of each sentence's capitalised words, and the whole unit's: where a name can be. */
  capitals: Set<string>[];
  wholeCapitals: Set<string>;
  /** How the unit capitalises each word (names.ts casePart), made when a question first needs it. */
  cases?: CasePart;
}

/**
 * Splitting a unit into sentences and stemming every word was most of a question's cost, and the same
 * units come back question after question. Keyed by the text itself, so a changed or removed unit can
 * never be served stale words (its new text is a new key); read-only once made.
 */
const UNIT_WORDS = new Map<string, UnitWords>();
const MAX_UNIT_WORDS = 4_000;

export function unitWords(text: string): UnitWords {
  const known = UNIT_WORDS.get(text);
  if (known) return known;
  const list = sentences(stripCaptions(text));
  const bags = list.map((s) => new Set(wordsOf(s).map(stem)));
  const whole = new Set(bags.flatMap((b) => [...b]));
  const capitals = list.map((s) => new Set((s.match(CAPITALISED) ?? []).map(stem)));
  const wholeCapitals = new Set(capitals.flatMap((b) => [...b]));
  const made = { list, bags, whole, capitals, wholeCapitals };
  if (UNIT_WORDS.size >= MAX_UNIT_WORDS) UNIT_WORDS.clear();
  UNIT_WORDS.set(text, made);
  return made;
}

const CAPITALISED = /(?<![\p{L}\p{N}])\p{Lu}[\p{L}\p{N}]*(?:['’]\p{L}+)?/gu;

/**
 * A pool's joined case counts and each text's mentions under them, remembered for the last pools: the
 * candidate finder's work when a question is asked again (they were a third of a local context build).
 * Keyed by the pool's texts in order, so a unit changed or gone makes another pool; read-only once made.
 */
const POOLS = new Map<string, { stats: CaseStats; mentions: Map<string, ReturnType<typeof mentionsIn>> }>();
const MAX_POOLS = 32;

export function poolCases(units: { text: string }[]) {
  const key = units.map((u) => u.text).join("\u0000");
  let pool = POOLS.get(key);
  if (!pool) {
    pool = { stats: joinCases(units.map((u) => unitCases(u.text))), mentions: new Map() };
    for (const old of POOLS.keys()) {
      if (POOLS.size < MAX_POOLS) break;
      POOLS.delete(old);
    }
    POOLS.set(key, pool);
  }
  return pool;
}

/** The unit's case counts, kept with its words: the candidate finder's statistics over the pool. */
function unitCases(text: string): CasePart {
  const words = unitWords(text);
  words.cases ??= casePart(text);
  return words.cases;
}
