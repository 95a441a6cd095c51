/**
 * "Who is the narrator?", "Who tells the story?": a story told in the first person never names its teller
 * where it tells ("I rang the bell" is Watson's doing, "I was in the apple barrel" Jim's); the others name
 * him when they speak to him ("My dear Watson", "'Jim,' said he"). So, in the index's longest document,
 * when its narration (outside quotation marks) says "I" often enough to be told in the first person, the
 * teller is the leading character whom speech addresses most and the narration seldom names. A story
 * whose narration seldom says "I" is told in the third person, and one whose teller nobody addresses by
 * name by a narrator it never names ("A Modest Proposal"): the answer says so.
 */
import { escapeRegExp, sentences } from "../text.ts";
import type { IndexRow } from "../types.ts";
import { type Answer, type ContextData, fixedAnswer } from "./answer.ts";
import type { SearchStores } from "./local-context.ts";

const NARRATOR =
  /^(?:who(?:'s|’s| is| was) (?:the )?(?:narrator|storyteller|story-teller)|who (?:tells|told|narrates|narrated) (?:the|this) (?:story|tale|book|novel)|who is telling (?:the|this) (?:story|tale))\b/;

export function asksNarrator(question: string): boolean {
  return NARRATOR.test(question.trim().toLowerCase().replace(/\s+/g, " "));
}

/**
 * Quoted speech, in curly or straight double quotation marks, read a paragraph at a time: a quotation
 * running over paragraphs opens each and closes only the last, so one still open ends with its paragraph.
 */
const QUOTED = /“[^”]*(?:”|$)|"[^"]*(?:"|$)/g;
const PARAGRAPH = /\r?\n[ \t]*\r?\n/;
/** Of the narration's words, at least this share "I": a story told in the first person. */
const FIRST_PERSON_SHARE = 0.005;
/** Addressed at least this many times, and named in the narration at most this share of that. */
const MIN_ADDRESSED = 3;
const NARRATION_SHARE = 1 / 3;
/** The leading characters weighed, and the pages of the longest document read. */
const CHARACTERS = 15;
const MAX_UNITS = 2000;

export async function narratorAnswer(stores: SearchStores, index: IndexRow): Promise<Answer | undefined> {
  const { search, graph } = stores;
  const [document] = await search.longestDocuments(index, 1);
  if (document === undefined) return undefined;
  const units = await search.units(index, await search.edgeUnits(index, document, "start", MAX_UNITS));
  const paragraphs = units.map((u) => ({ id: u.id, paragraphs: u.text.split(PARAGRAPH) }));
  const narration = paragraphs.flatMap((u) => u.paragraphs.map((p) => p.replace(QUOTED, " "))).join(" ");
  const words = narration.match(/\p{L}+/gu)?.length ?? 0;
  const firstPerson = narration.match(/\bI\b/g)?.length ?? 0;
  if (words === 0) return undefined;
  const sources: ContextData["sources"] = [];
  if (firstPerson / words < FIRST_PERSON_SHARE)
    return fixedAnswer(
      { sources },
      'The story is told in the third person: its narration seldom says "I", so no character tells it.',
    );
  let best: { name: string; addressed: number; unit: number; line: string } | undefined;
  for (const person of await graph.leadingEntities(index, "person", CHARACTERS)) {
    // The name as speech says it to someone: its first word ("Jim" of "Jim Hawkins"), or the whole name.
    const called = person.name.replace(/^(?:Mr|Mrs|Miss|Dr)\.?\s+/, "").split(/\s+/);
    for (const name of new Set([called[0] as string, called.join(" ")])) {
      const said = new RegExp(`(?<![\\p{L}])${escapeRegExp(name)}(?![\\p{L}])`, "gu");
      // Spoken to: "My dear Watson", "'Jim,' said he", "…, Victor?" (not "the Arabian").
      const addressed = new RegExp(`(?:\\bdear(?:est)? |[,“"] ?)${escapeRegExp(name)}(?=[,!?.—”"])`, "u");
      let count = 0;
      let where: { unit: number; line: string } | undefined;
      for (const u of paragraphs)
        for (const paragraph of u.paragraphs)
          for (const speech of paragraph.match(QUOTED) ?? [])
            if (addressed.test(speech)) {
              count++;
              // Quoted as the sentence that says it ("'Jim,' said he, 'you're a good boy.'").
              if (!where) {
                const line = sentences(paragraph.replace(/\s+/g, " ")).find((s) => addressed.test(s));
                where = { unit: u.id, line: line ?? speech.replace(/\s+/g, " ").trim() };
              }
            }
      const inNarration = narration.match(said)?.length ?? 0;
      if (
        where &&
        count >= MIN_ADDRESSED &&
        inNarration <= NARRATION_SHARE * count &&
        count > (best?.addressed ?? 0)
      )
        best = { name: person.name, addressed: count, ...where };
    }
  }
  if (!best)
    return fixedAnswer(
      { sources },
      'The story is told in the first person by a narrator it never names: the narration says "I", and no one addresses the teller by name.',
    );
  const unit = units.find((u) => u.id === best.unit);
  if (unit) sources.push({ id: String(unit.id), text: unit.text, in_context: true });
  return fixedAnswer(
    { sources },
    `The story is told in the first person by **${best.name}**: the narration says "I" and never names its teller, whom the others call by name: ${best.line} [Data: Sources (${best.unit})]`,
  );
}
