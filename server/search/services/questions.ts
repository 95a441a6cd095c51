/**
 * Follow-up questions grounded in the graph around the query: the local context's entities and
 * relationships. A model writes them from the context tables; offline they come from the top entities
 * and their strongest relationships.
 */
import { completeText, type ModelChoice } from "../model-calls.ts";
import type { IndexRow } from "../types.ts";
import { buildLocalContext, type LocalContext, type SearchStores } from "./local-context.ts";
import { questionsSystemPrompt } from "./prompts.ts";

export const QUESTION_COUNT = 5;

export async function generateQuestions(
  stores: SearchStores,
  index: IndexRow,
  query: string,
  model?: ModelChoice,
  signal?: AbortSignal,
): Promise<string[]> {
  const context = await buildLocalContext(stores, index, query, { maxTokens: 6000 });
  if (context.entities.length === 0) return [];
  if (!model) return offlineQuestions(context, query);
  const reply = await completeText(model, questionsSystemPrompt(context.text, QUESTION_COUNT), query, signal);
  const questions = reply
    .split("\n")
    .map((line) => line.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, "").trim())
    .filter((line) => line.endsWith("?"));
  return questions.slice(0, QUESTION_COUNT);
}

export function offlineQuestions(context: LocalContext, query: string): string[] {
  const out: string[] = [];
  const add = (q: string) => {
    if (out.length < QUESTION_COUNT && !out.includes(q) && q.toLowerCase() !== query.trim().toLowerCase())
      out.push(q);
  };
  const name = familyNames(context);
  const role = (e: { name: string }) =>
    name(e.name) === e.name ? `What role does ${e.name} play?` : `What role do ${name(e.name)} play?`;
  const [first, second] = context.entities;
  const tie = (r: { source: string; target: string }) =>
    `How are ${name(r.source)} and ${name(r.target)} connected?`;
  for (const r of context.relationships.slice(0, 2)) add(tie(r));
  for (const e of context.entities.slice(0, 3))
    add(e.type === "geo" ? `What happens in ${e.name}?` : role(e));
  if (first) add(`Who else is closely connected to ${name(first.name)}?`);
  if (first && second) add(`What do ${name(first.name)} and ${name(second.name)} have in common?`);
  for (const r of context.relationships.slice(2)) add(tie(r));
  for (const e of context.entities.slice(3)) add(role(e));
  return out;
}

/**
 * A family named in the plural ("Cratchits" beside "Bob Cratchit") is "the Cratchits" in a question; every
 * other name is as it is.
 */
function familyNames(context: LocalContext): (name: string) => string {
  const surnames = new Set(context.entities.map((e) => e.name.split(" ").at(-1)));
  return (name) => (/^\p{Lu}\p{Ll}+s$/u.test(name) && surnames.has(name.slice(0, -1)) ? `the ${name}` : name);
}
