/**
 * The model a search request answers or indexes with: the one it names, else the configured default;
 * undefined means offline (extractive answers, the NLP extractor). A name the catalog does not know is
 * the caller's mistake: a 422 on `body.model`, as FastAPI would report it.
 */
import { invalidValue } from "../../http/errors.ts";
import { OFFLINE_MODEL_ID } from "../../models/ids.ts";
import { type ModelService, UnknownModelError } from "../../models/service.ts";
import type { ModelChoice } from "../model-calls.ts";

export async function chooseModel(
  models: ModelService,
  requested?: string,
): Promise<ModelChoice | undefined> {
  const id = requested ?? models.fallbackModel().id;
  if (id === "offline" || id === OFFLINE_MODEL_ID) return undefined;
  try {
    return { models, model: await models.resolve(id) };
  } catch (error) {
    if (!(error instanceof UnknownModelError)) throw error;
    throw invalidValue(["body", "model"], error.message);
  }
}
