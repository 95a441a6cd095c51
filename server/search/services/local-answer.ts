/**
 * The offline local answer: written from the local context the way a reader answers from a book.
 *
 * It opens with the one sentence that best answers the question: sentences of the in-context sources are
 * scored by whether they name the entity the question is about (the subject: the matched entity whose
 * name the query spells out), by the query's words (with a few everyday equivalents: "live" finds
 * "home" and "house"), and by what the question word asks for (a place for "where", a time for "when",
 * a description for "who"). Then the subject and its strongest relationships, then the other
 * supporting sentences, each cited as [Data: Sources (ids); Entities (ids)].
 */

import { idList } from "../text.ts";
import type { LocalContext } from "./local-context.ts";
import { answers, leadPassage, namesCandidateFirst, type Passage } from "./passages.ts";
import { NO_DATA_ANSWER } from "./prompts.ts";
import { subjectOf } from "./subject.ts";

const SUPPORTING = 3;
const MAX_TIES = 3;
interface Scored {
  text: string;
  source: number;
  entities: number[];
}

export function extractiveAnswer(context: LocalContext, query: string): string {
  const subject = subjectOf(context.entities, query);
  const { question, passages } = context;
  const named = context.entities.slice(0, 10);
  const cited = (p: Passage): Scored => {
    const lower = p.text.toLowerCase();
    const mentioned = named.filter((e) => lower.includes(e.name.toLowerCase())).map((e) => e.human_id);
    return { text: p.text, source: p.unit, entities: mentioned };
  };
  const lead = leadPassage(passages, question);
  if (!lead) return NO_DATA_ANSWER;
  // After the opening, the sentences that name a fitting candidate come first: when the opening is a
  // near miss, they are what a reader checks next.
  const others = passages.filter((p) => p !== lead);
  const rest = [
    ...others.filter((p) => p.candidate && !p.weak),
    ...others.filter((p) => !p.candidate || p.weak),
  ];

  const confident = answers(lead, question);
  const first = cited(lead);
  const parts: string[] = [];
  const used = new Set([lead.text]);
  if (!confident) {
    // A near miss is given as a passage, not a sentence: the answer is often the sentence after it
    // ("…slimy monsters…" then "I have understood since that they were sea lions").
    const after = lead.next;
    if (after) used.add(after);
    const text = after ? `${first.text} ${after}` : first.text;
    parts.push(`The text does not say this directly. The nearest passage is: ${text} ${cite(first)}`);
  } else if (namesCandidateFirst(lead)) parts.push(`**${lead.candidate}**: ${first.text} ${cite(first)}`);
  else parts.push(`${first.text} ${cite(first)}`);

  if (subject) {
    const ties = context.relationships
      .filter((r) => r.source_id === subject.id || r.target_id === subject.id)
      .sort((a, b) => b.weight - a.weight)
      .slice(0, MAX_TIES);
    const others = ties.map((r) => (r.source_id === subject.id ? r.target : r.source));
    const about = `${subject.name} (${subject.type}) [Data: Entities (${subject.human_id})]`;
    parts.push(
      others.length > 0
        ? `${about} is most closely tied to ${list(others)} [Data: Relationships (${idList(ties.map((r) => r.human_id))})].`
        : `${about}.`,
    );
  }
  // Each sentence once: the supporting passages never repeat the opening or each other.
  const supporting: Scored[] = [];
  for (const p of rest) {
    if (supporting.length >= SUPPORTING) break;
    if (used.has(p.text)) continue;
    used.add(p.text);
    supporting.push(cited(p));
  }
  if (supporting.length > 0)
    parts.push(`Supporting passages:\n\n${supporting.map((s) => `- "${s.text}" ${cite(s)}`).join("\n")}`);
  return parts.join("\n\n");
}

function cite(s: Scored): string {
  const refs = [`Sources (${s.source})`];
  if (s.entities.length > 0) refs.push(`Entities (${idList(s.entities)})`);
  return `[Data: ${refs.join("; ")}]`;
}

function list(names: string[]): string {
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names.at(-1)}` : (names[0] ?? "");
}
