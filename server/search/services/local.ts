/**
 * Local search: the mixed context of local-context.ts answered by the model, or offline by the sentence
 * that best answers the question, the subject's strongest ties and supporting sentences (local-answer.ts).
 */
import type { ModelChoice } from "../model-calls.ts";
import type { IndexRow } from "../types.ts";
import { type Answer, type ContextData, fixedAnswer, modelAnswer } from "./answer.ts";
import { extractiveAnswer } from "./local-answer.ts";
import { buildLocalContext, type LocalContextOptions, type SearchStores } from "./local-context.ts";
import { localSystemPrompt, NO_DATA_ANSWER } from "./prompts.ts";

export async function localSearch(
  stores: SearchStores,
  index: IndexRow,
  query: string,
  model?: ModelChoice,
  options?: LocalContextOptions,
): Promise<Answer> {
  const context = await buildLocalContext(stores, index, query, options);
  const data = context.tables as unknown as ContextData;
  if (context.sources.length === 0 && context.entities.length === 0) return fixedAnswer(data, NO_DATA_ANSWER);
  if (model) return modelAnswer(data, model, localSystemPrompt(context.text), query);
  return fixedAnswer(data, extractiveAnswer(context, query));
}
