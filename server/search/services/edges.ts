/**
 * "By the end of the story", "at the beginning": the pages at a document's edge that are about what the
 * question asks. A downloaded book often ends with a licence or begins with a publisher's front matter,
 * so the last (or first) pages are not the story's; the edge is the last (or first) pages that hold one of
 * the question's terms (its names among them), read from a few more pages in.
 */
import type { SearchStore } from "../stores/search-store.ts";
import type { IndexRow, UnitRow } from "../types.ts";
import type { Question } from "./question.ts";
import { stem, wordsOf } from "./terms.ts";

/** Pages scanned from the edge for ones about the question. */
const EDGE_SCAN = 10;

export async function edgeUnitsAbout(
  search: SearchStore,
  index: IndexRow,
  documentId: number,
  question: Question,
  count: number,
): Promise<(UnitRow & { title: string })[]> {
  const position = question.position;
  if (!position) return [];
  const ids = await search.edgeUnits(index, documentId, position, EDGE_SCAN);
  // Its names or its other words: a story told in the first person never names its teller ("Jim") on the
  // last page, whose "accursed island" is what "how does Jim feel about the island at the end" asks for.
  const wanted = new Set(question.terms.map(stem));
  const rows = new Map((await search.units(index, ids)).map((u) => [u.id, u]));
  // In the edge's order (nearest the edge first), the pages read.
  const read = ids.flatMap((id) => rows.get(id) ?? []);
  const about = read.filter((u) => wordsOf(u.text).some((w) => wanted.has(stem(w))));
  return (about.length > 0 ? about : read).slice(0, count);
}
