/**
 * A model served by an OpenAI-compatible endpoint (Ollama, a gateway, a local server): the one
 * descriptor pi-ai needs, with the conservative wire options such servers accept.
 */
import type { Api, Model } from "@mariozechner/pi-ai";

export function openAiCompatibleModel(spec: { id: string; name: string; provider: string; baseUrl: string }) {
  return {
    ...spec,
    baseUrl: spec.baseUrl.replace(/\/+$/, ""),
    api: "openai-completions",
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128_000,
    maxTokens: 16_384,
    compat: { supportsDeveloperRole: false, supportsReasoningEffort: false, supportsStore: false },
  } as Model<Api>;
}
