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
  dispose(): void;
}

let counter = 0;

export function scriptedModel(
  models: ModelService,
  responses: FauxResponseStep[],
  options: { tokensPerSecond?: number; reasoning?: boolean } = {},
): ScriptedModel {
  const provider = `faux${++counter}`;
  const registration = registerFauxProvider({
    provider,
    models: [{ id: "scripted", reasoning: options.reasoning ?? false }],
    tokensPerSecond: options.tokensPerSecond,
  });
  registration.setResponses(responses);
  const id = models.register(registration.getModel());
  return {
    id,
    registration,
    dispose() {
      models.unregister(id);
      registration.unregister();
    },
  };
}
