/**
 * The model turns run with: the one the request named (`rootModelAllowed` bounds it), else the policy's
 * `model.id`, else the server default. With the policy's base
 * URL variable set, a bare id names a model of that OpenAI-compatible endpoint (`openai/<id>`), called
 * with the policy's key variable; an id with an explicit `provider/` prefix resolves as everywhere.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import { openAiCompatibleModel } from "../../models/compatible.ts";
import type { ModelService } from "../../models/service.ts";

export interface TurnModelDeps {
  models: Pick<ModelService, "register" | "resolve" | "fallbackModel" | "list">;
  /** Read per turn: the policy's model settings. */
  model: { id: string };
  endpoint: { modelBaseUrl?: string; modelApiKey?: string };
}

/** Rejects with UnknownModelError when the id names no model. Resolving loads pi-ai (models/pi-ai.ts). */
export async function turnModel({ models, model, endpoint }: TurnModelDeps): Promise<Model<Api>> {
  const { id } = model;
  const { modelBaseUrl, modelApiKey } = endpoint;
  if (modelBaseUrl && id && !id.includes("/")) {
    const compatible = openAiCompatibleModel({
      id,
      name: `${id} (${modelBaseUrl})`,
      provider: "openai",
      baseUrl: modelBaseUrl,
    });
    return models.resolve(models.register(compatible, { apiKey: modelApiKey }));
  }
  return models.resolve(id || models.fallbackModel().id);
}

/**
 * Whether a turn request may name `id` as its root model: the policy's own model, or one the server has
 * configured (its configured providers' models, a registered endpoint's, the offline model: the models
 * chat lists). A model of a provider the server has no key for is refused: it would run on nobody's key.
 */
export async function rootModelAllowed(
  { models, model }: Pick<TurnModelDeps, "models" | "model">,
  id: string,
): Promise<boolean> {
  if (id === model.id) return true;
  return (await models.list()).some((m) => m.key === id && m.available);
}
