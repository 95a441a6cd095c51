/**
 * An answer in the making: the context tables it rests on, and its text as a stream of pieces. Search
 * routes either drain it (`{response, context_data}`) or forward it as SSE (context, deltas, done). Model
 * answers stream the model's real tokens; offline answers are cut into small chunks.
 */
import { chunkText } from "../../models/offline.ts";
import { type ModelChoice, ModelFailedError, userMessage } from "../model-calls.ts";

export type ContextData = Record<string, Record<string, string | number | boolean>[]>;

export interface Answer {
  context_data: ContextData;
  pieces(signal?: AbortSignal): AsyncGenerator<string>;
}

export function fixedAnswer(context_data: ContextData, text: string): Answer {
  return {
    context_data,
    async *pieces() {
      for (const chunk of chunkText(text)) yield chunk;
    },
  };
}

export function modelAnswer(
  context_data: ContextData,
  choice: ModelChoice,
  systemPrompt: string,
  query: string,
): Answer {
  return { context_data, pieces: (signal) => streamModel(choice, systemPrompt, query, signal) };
}

export async function* streamModel(
  { models, model }: ModelChoice,
  systemPrompt: string,
  query: string,
  signal?: AbortSignal,
): AsyncGenerator<string> {
  const stream = models.stream(model, { systemPrompt, messages: [userMessage(query)] }, { signal });
  for await (const event of stream) {
    if (event.type === "text_delta") yield event.delta;
    else if (event.type === "error")
      throw new ModelFailedError(`the model failed: ${event.error.errorMessage ?? event.reason}`);
  }
}

export async function drain(answer: Answer, signal?: AbortSignal): Promise<string> {
  let text = "";
  for await (const piece of answer.pieces(signal)) text += piece;
  return text;
}
