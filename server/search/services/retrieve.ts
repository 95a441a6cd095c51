/**
 * Passage retrieval for one question over one index: the candidate text units (BM25 over the units on
 * the question's terms, plus any the caller brings: the units of the matched entities), the question's
 * term weights from how many units hold each term, and the scored sentences (passages.ts).
 */

import type { SearchGraphStore } from "../stores/graph-store.ts";
import type { SearchStore } from "../stores/search-store.ts";
import type { IndexRow, UnitRow } from "../types.ts";
import { edgeUnitsAbout } from "./edges.ts";
import {
  documentSizes,
  entityTypes,
  rememberedSearch as remembered,
  termCounts,
  unitCount,
} from "./index-stats.ts";
import { type Passage, scorePassages, termGroups } from "./passages.ts";
import { questionPhrases } from "./phrases.ts";
import type { Question } from "./question.ts";

/** Document frequencies are counted up to this: beyond it a term is simply common. */
const DF_CAP = 400;
/** Units BM25 brings into the pool. */
const BM25_UNITS = 16;
/** Units a question's own phrases bring into the pool. */
const PHRASE_UNITS = 4;
/** Passages an answer chooses from. */
const PASSAGES = 40;
/** Passages whose sentences (with their neighbours) a context may give, budget permitting. */
const WINDOW_PASSAGES = 160;
/** Units read at a document's end (or start) when the question says where. */
const EDGE_UNITS = 2;
/** How much less at the edge each edge page further in is (the story's last page before the one before it). */
const EDGE_STEP = 0.01;
/** Documents whose end (or start) is read. */
const EDGE_DOCUMENTS = 3;

/** The search family's SQL stores, as the retrieval and context builders read them. */
export interface SearchStores {
  search: SearchStore;
  graph: SearchGraphStore;
}

export interface Retrieved {
  passages: Passage[];
  /** The pool's units by id, with their document title. */
  units: Map<number, UnitRow & { title: string }>;
  /**
   * The passages, then (when `windows` was asked) further ones down to WINDOW_PASSAGES: the sentences a
   * context gives as windows (windows.ts).
   */
  windowed: Passage[];
  /** Unit ids, best passage first. */
  ranked: number[];
}

export async function retrievePassages(
  stores: SearchStores,
  index: IndexRow,
  question: Question,
  extraUnits: number[] = [],
  options: { bm25Units?: number; poolLimit?: number; windows?: boolean } = {},
): Promise<Retrieved> {
  const { search, graph } = stores;
  const terms = question.terms.slice(0, 12);
  const total = await unitCount(search, index);
  const dfs = await termCounts(search, index, terms, DF_CAP);
  const counted = terms.map((term, i) => ({
    term,
    df: dfs[i] ?? 0,
    name: question.names.includes(term),
    related: question.related.get(term),
  }));
  const groups = termGroups(counted, total);
  // Terms no unit holds cannot rank a unit: BM25 over the others (names count once, not twice), and
  // their everyday equivalents, since a book seldom uses the question's own word ("tall": "height").
  const present = [...new Set(counted.flatMap((t) => [...(t.df > 0 ? [t.term] : []), ...(t.related ?? [])]))];
  const match = present.map((t) => `"${t}"`).join(" OR ");
  const limit = options.bm25Units ?? BM25_UNITS;
  const bm25 =
    present.length > 0
      ? await remembered(search, index, "units", match, limit, () => search.searchUnits(index, match, limit))
      : [];
  // Pages that say one of the question's own phrases ("make the being") join the pool.
  const phrases = questionPhrases(question.text);
  const phrased = await remembered(search, index, "phrases", phrases.join("\u0000"), PHRASE_UNITS, () =>
    search.phraseUnits(index, phrases, PHRASE_UNITS),
  );
  let ids = [...new Set([...bm25, ...phrased, ...extraUnits])].slice(0, options.poolLimit ?? 40);
  let rows = await search.units(index, ids);
  // The pages at the story's edge (a licence or front matter aside) count as its very end or start, the
  // nearest the edge the most: each by its place among its document's edge pages (0 nearest).
  const edges = new Map<number, number>();
  if (question.position) {
    // "By the end of the story": the first documents' last (or first) pages about the question join the pool;
    // "How does the story end?" names nothing to find them by (nor does "Who wrote this book?" when no
    // page says "author"): then the longest documents are the story.
    const found = [...new Set(bm25.flatMap((id) => rows.find((u) => u.id === id)?.document_id ?? []))];
    const documents = found.length > 0 ? found : await search.longestDocuments(index, EDGE_DOCUMENTS);
    for (const d of documents.slice(0, EDGE_DOCUMENTS))
      for (const [k, u] of (await edgeUnitsAbout(search, index, d, question, EDGE_UNITS)).entries()) {
        edges.set(u.id, k);
        if (ids.includes(u.id)) continue;
        ids = [...ids, u.id];
        rows = [...rows, u];
      }
  }
  const sizes = await documentSizes(search, index, [...new Set(rows.map((u) => u.document_id))]);
  const units = new Map(rows.map((u) => [u.id, u]));
  const pool = ids.flatMap((id) => {
    const u = units.get(id);
    if (!u) return [];
    const n = sizes.get(u.document_id) ?? 1;
    const k = edges.get(id);
    const edge =
      k === undefined ? undefined : question.position === "end" ? 1 - EDGE_STEP * k : EDGE_STEP * k;
    return [{ id, text: u.text, position: edge ?? (n > 1 ? u.ordinal / (n - 1) : 0.5) }];
  });
  const scored = await scorePassages(
    pool,
    question,
    groups,
    (names) => entityTypes(graph, index, names),
    PASSAGES,
    options.windows ? WINDOW_PASSAGES - PASSAGES : 0,
  );
  const passages = scored.slice(0, PASSAGES);
  const ranked: number[] = [];
  for (const p of passages) if (!ranked.includes(p.unit)) ranked.push(p.unit);
  for (const id of ids) if (!ranked.includes(id) && units.has(id)) ranked.push(id);
  return { passages, windowed: scored, units, ranked };
}
