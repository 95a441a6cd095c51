/** The entity a question is about: the matched entity whose name the question spells out most fully. */
import { HONORIFICS } from "../indexing/names.ts";
import type { EntityRow } from "../types.ts";

/** The entity the question is about: the matched entity whose name the query spells out most fully. */
export function subjectOf(entities: EntityRow[], query: string): EntityRow | undefined {
  const words = new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  let best: EntityRow | undefined;
  let bestScore = 0;
  for (const e of entities) {
    const parts = nameWords(e.name);
    if (parts.length === 0) continue;
    const hits = parts.filter((p) => words.has(p)).length;
    // Every word of the name present beats some; longer full matches beat shorter ones; the titles tell
    // namesakes apart ("Who is Fezziwig?" is about Fezziwig, "Who is Mrs. Fezziwig?" about Mrs. Fezziwig).
    const titles = titleWords(e.name);
    const said = titles.filter((w) => words.has(w)).length;
    const score =
      hits === 0
        ? 0
        : (hits === parts.length ? 10 : 0) +
          hits -
          (parts.length - hits) * 0.5 +
          (2 * said - titles.length) * 0.1;
    if (score > bestScore) {
      best = e;
      bestScore = score;
    }
  }
  return best;
}

/** The titles a name may carry ("Mr.", "Lady", "Captain"): the extractor's own list. */
const TITLES = new Set(HONORIFICS.keys());

function nameWords(name: string): string[] {
  return words(name).filter((w) => !TITLES.has(w) && w !== "of" && w !== "the");
}

function titleWords(name: string): string[] {
  return words(name).filter((w) => TITLES.has(w));
}

function words(name: string): string[] {
  return name.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}
