/**
 * Local search: the mixed context of local-context.ts answered by the model, or offline by the sentences
 * of the in-context sources that best support the query (query terms and matched entity names), each
 * cited as [Data: Sources (ids); Entities (ids)].
 */
import type { ModelChoice } from "../model-calls.ts";
import type { IndexRow } from "../types.ts";
import { type Answer, type ContextData, fixedAnswer, modelAnswer } from "./answer.ts";
import {
  buildLocalContext,
  type LocalContext,
  type LocalContextOptions,
  type SearchStores,
} from "./local-context.ts";
import { localSystemPrompt, NO_DATA_ANSWER } from "./prompts.ts";
import { queryTerms, termOverlap } from "./terms.ts";
import { idList, sentences } from "./text.ts";

const MAX_SENTENCES = 4;

export function localSearch(
  stores: SearchStores,
  index: IndexRow,
  query: string,
  model?: ModelChoice,
  options?: LocalContextOptions,
): Answer {
  const context = buildLocalContext(stores, index, query, options);
  const data = context.tables as unknown as ContextData;
  if (context.sources.length === 0 && context.entities.length === 0) return fixedAnswer(data, NO_DATA_ANSWER);
  if (model) return modelAnswer(data, model, localSystemPrompt(context.text), query);
  return fixedAnswer(data, extractiveAnswer(context, query));
}

export function extractiveAnswer(context: LocalContext, query: string): string {
  const terms = queryTerms(query);
  const names = context.entities.slice(0, 3);
  const scored: { text: string; score: number; source: number; entities: number[]; order: number }[] = [];
  let order = 0;
  for (const source of context.sources) {
    for (const sentence of sentences(source.text)) {
      if (sentence.length < 20) continue;
      const mentioned = names.filter((e) => sentence.toLowerCase().includes(e.name.toLowerCase()));
      const score = termOverlap(sentence, terms) + 2 * mentioned.length;
      if (score > 0)
        scored.push({
          text: sentence,
          score,
          source: source.id,
          entities: mentioned.map((e) => e.human_id),
          order: order++,
        });
    }
  }
  const best = scored.sort((a, b) => b.score - a.score || a.order - b.order);
  const chosen: typeof best = [];
  for (const s of best) {
    if (chosen.length >= MAX_SENTENCES) break;
    if (!chosen.some((c) => c.text === s.text)) chosen.push(s);
  }
  if (chosen.length === 0) return NO_DATA_ANSWER;
  const lead = context.entities[0];
  const intro = lead
    ? `${lead.name} (${lead.type}): ${firstSentence(lead.description)} [Data: Entities (${lead.human_id})]`
    : "From the indexed text:";
  const lines = chosen.map((s) => {
    const refs = [`Sources (${s.source})`];
    if (s.entities.length > 0) refs.push(`Entities (${idList(s.entities)})`);
    return `- "${s.text}" [Data: ${refs.join("; ")}]`;
  });
  return `${intro}\n\nThe passages that best answer this:\n\n${lines.join("\n")}`;
}

function firstSentence(text: string): string {
  return sentences(text)[0] ?? text;
}
