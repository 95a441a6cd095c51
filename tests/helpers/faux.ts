/**
 * Scripted models for tests: pi-ai's faux provider registered under its own provider name and made
 * resolvable through the app's ModelService as `<provider>/<model>`.
 */
import {
  type FauxProviderRegistration,
  type FauxResponseStep,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import type { ModelService } from "../../server/models/service.ts";

export interface ScriptedModel {
  /** The id to pass wherever a model id is accepted. */
  id: string;
  registration: FauxProviderRegistration;
  /** Queues more responses after the ones given. */
  append(responses: FauxResponseStep[]): void;
  /** Responses not consumed yet. */
  pending(): number;
  /** How many times the model was called. */
  calls(): number;
  dispose(): void;
}

export interface ScriptedOptions {
  tokensPerSecond?: number;
  reasoning?: boolean;
  /** The model's context window (small ones make chat compact). */
  contextWindow?: number;
  /** pi-ai's per-model level map (`{xhigh: "max"}`: the model has the highest level). */
  thinkingLevelMap?: Record<string, string | null>;
}

let counter = 0;

export function scriptedModel(
  models: ModelService,
  responses: FauxResponseStep[],
  options: ScriptedOptions = {},
): ScriptedModel {
  const provider = `faux${++counter}`;
  const registration = registerFauxProvider({
    provider,
    models: [{ id: "scripted", reasoning: options.reasoning ?? false, contextWindow: options.contextWindow }],
    tokensPerSecond: options.tokensPerSecond,
  });
  registration.setResponses(responses);
  const model = registration.getModel();
  if (options.thinkingLevelMap) model.thinkingLevelMap = options.thinkingLevelMap;
  const id = models.register(model);
  return {
    id,
    registration,
    append: (more) => registration.appendResponses(more),
    pending: () => registration.getPendingResponseCount(),
    calls: () => registration.state.callCount,
    dispose() {
      models.unregister(id);
      registration.unregister();
    },
  };
}
