/**
 * How the search family talks to a model, for the query services and the indexing pipeline alike: the
 * chosen model, a user message, one completion as text, and the text or JSON of a reply. Kept here once
 * so both layers ask and read replies the same way.
 */
import type { Api, Model, UserMessage } from "@mariozechner/pi-ai";
import { replyFailed, replyText } from "../models/reply.ts";
import type { ModelService } from "../models/service.ts";

/** The provider failed or broke off: its fault, not the request's (routes answer 503 with what it said). */
export class ModelFailedError extends Error {}

/** A resolved model and the layer that calls it; absent (undefined) means offline. */
export interface ModelChoice {
  models: ModelService;
  model: Model<Api>;
}

export function userMessage(content: string): UserMessage {
  return { role: "user", content, timestamp: Date.now() };
}

/** One completion of `query` under `systemPrompt`, as text; a failed reply throws "the model failed". */
export async function completeText(
  { models, model }: ModelChoice,
  systemPrompt: string,
  query: string,
  signal?: AbortSignal,
): Promise<string> {
  const reply = await models.complete(model, { systemPrompt, messages: [userMessage(query)] }, { signal });
  if (replyFailed(reply))
    throw new ModelFailedError(`the model failed: ${reply.errorMessage ?? reply.stopReason}`);
  return replyText(reply);
}

/** The first JSON object in a reply (models wrap it in prose or code fences), or undefined. */
export function jsonIn(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}
