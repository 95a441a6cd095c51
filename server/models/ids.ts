/** Model ids are `provider/model`; the model part may itself contain slashes (`groq/openai/gpt-oss-20b`). */

export interface ModelRef {
  provider: string;
  model: string;
}

export const OFFLINE_MODEL_ID = "offline/offline";

export function parseModelId(id: string): ModelRef | undefined {
  const slash = id.indexOf("/");
  if (slash <= 0 || slash === id.length - 1) return undefined;
  const provider = id.slice(0, slash);
  const model = id.slice(slash + 1);
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(provider) || /\s/.test(model)) return undefined;
  return { provider, model };
}

export function formatModelId(ref: ModelRef): string {
  return `${ref.provider}/${ref.model}`;
}
