/**
 * Local search: the mixed context of local-context.ts answered by the model, or offline by the sentence
 * that best answers the question, the subject's strongest ties and supporting sentences (local-answer.ts);
 * offline, a question about the whole is answered as global search answers it.
 */
import type { ModelChoice } from "../model-calls.ts";
import type { IndexRow } from "../types.ts";
import { type Answer, type ContextData, fixedAnswer, modelAnswer } from "./answer.ts";
import { defaultLevel } from "./global.ts";
import { broadQuestion, offlineGlobal } from "./global-offline.ts";
import { extractiveAnswer } from "./local-answer.ts";
import { buildLocalContext, type LocalContextOptions, type SearchStores } from "./local-context.ts";
import { asksNarrator, narratorAnswer } from "./narrator.ts";
import { localSystemPrompt, NO_DATA_ANSWER } from "./prompts.ts";

/** A broad question's answer, as global search gives it by default. */
const BROAD_TOKENS = 8000;
const BROAD_POINTS = 8;

export async function localSearch(
  stores: SearchStores,
  index: IndexRow,
  query: string,
  model?: ModelChoice,
  options?: LocalContextOptions,
): Promise<Answer> {
  // "Who is the narrator?": the teller is found in the whole story (narrator.ts), not around a name.
  if (!model && asksNarrator(query)) {
    const told = await narratorAnswer(stores, index);
    if (told) return told;
  }
  // "What is this book about?", "Who are the main characters?" ask about the whole and name nothing to
  // start from (local search's "main" found the main-sail): offline, they get global search's answer.
  if (!model && broadQuestion(query)) {
    const level = await defaultLevel(stores.graph, index);
    return offlineGlobal(stores, index, query, level, BROAD_TOKENS, BROAD_POINTS);
  }
  const context = await buildLocalContext(stores, index, query, options);
  const data = context.tables as unknown as ContextData;
  if (context.sources.length === 0 && context.entities.length === 0) return fixedAnswer(data, NO_DATA_ANSWER);
  if (model) return modelAnswer(data, model, localSystemPrompt(context.text), query);
  return fixedAnswer(data, extractiveAnswer(context, query));
}
