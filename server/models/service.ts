/**
 * The model layer every family uses: pi-ai's registry behind `provider/model` ids, the eight-provider
 * catalog with `configured` flags, default resolution (settings → first configured provider → offline),
 * and streaming with the provider's key injected from the environment (never from pi-ai's own lookup of
 * process.env, so the policy's "named variables only" rule holds).
 */
import {
  type Api,
  type AssistantMessage,
  type AssistantMessageEventStream,
  type Context,
  completeSimple,
  getModels,
  type KnownProvider,
  type Model,
  type SimpleStreamOptions,
  streamSimple,
} from "@mariozechner/pi-ai";
import type { EnvSource } from "../config/env.ts";
import { PROVIDERS, providerInfo } from "./catalog.ts";
import { openAiCompatibleModel } from "./compatible.ts";
import { formatModelId, OFFLINE_MODEL_ID, parseModelId } from "./ids.ts";
import { offlineModel, registerOfflineProvider } from "./offline.ts";

export class UnknownModelError extends Error {
  override name = "UnknownModelError";
}

export interface ProviderEntry {
  id: string;
  name: string;
  envVarName: string;
  configured: boolean;
}

export interface ModelInfo {
  /** `provider/model` */
  id: string;
  provider: string;
  name: string;
  reasoning: boolean;
  contextWindow: number;
}

export type DefaultSource = "settings" | "provider" | "offline";

export interface DefaultModel {
  id: string;
  source: DefaultSource;
  /** Why a preferred model from settings was not used. */
  diagnostic?: string;
}

interface Registered {
  model: Model<Api>;
  apiKey?: string;
}

const OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434";
/** Providers whose SDK finds its own credentials (AWS chain, Google ADC); no key is passed. */
const AMBIENT_CREDENTIALS = new Set(["amazon-bedrock", "google-vertex"]);

export class ModelService {
  private readonly registered = new Map<string, Registered>();

  constructor(private readonly env: EnvSource) {
    registerOfflineProvider();
  }

  providers(): ProviderEntry[] {
    return PROVIDERS.map(({ id, name, envVarName }) => ({
      id,
      name,
      envVarName,
      configured: this.env.has(envVarName),
    }));
  }

  /** settings → first configured provider → offline. A preferred id that does not resolve is reported. */
  defaultModel(preferred?: string): DefaultModel {
    let diagnostic: string | undefined;
    if (preferred) {
      try {
        this.resolve(preferred);
        return { id: preferred, source: "settings" };
      } catch (error) {
        diagnostic = (error as Error).message;
      }
    }
    const first = PROVIDERS.find((p) => this.env.has(p.envVarName));
    if (first) return { id: `${first.id}/${first.defaultModel}`, source: "provider", diagnostic };
    return { id: OFFLINE_MODEL_ID, source: "offline", diagnostic };
  }

  /** The pi-ai model for an id; throws UnknownModelError with a message fit for the caller. */
  resolve(id: string): Model<Api> {
    if (id === OFFLINE_MODEL_ID || id === "offline") return offlineModel;
    const registered = this.registered.get(id);
    if (registered) return registered.model;
    const ref = parseModelId(id);
    if (!ref)
      throw new UnknownModelError(
        `Invalid model id '${id}': expected provider/model, e.g. openai/gpt-5-mini`,
      );
    const info = providerInfo(ref.provider);
    if (!info) {
      throw new UnknownModelError(
        `Unknown provider '${ref.provider}'; known: ${PROVIDERS.map((p) => p.id).join(", ")}, offline`,
      );
    }
    if (info.id === "ollama") return this.ollamaModel(ref.model);
    const models = getModels(info.id as KnownProvider) as Model<Api>[];
    const model = models.find((m) => m.id === ref.model);
    if (!model) {
      const some = models
        .slice(0, 8)
        .map((m) => m.id)
        .join(", ");
      throw new UnknownModelError(
        `Unknown model '${id}'; ${info.name} offers ${models.length} models, e.g. ${some}`,
      );
    }
    return model;
  }

  /**
   * Models of the configured providers, the registered ones, and offline. Ollama serves whatever the
   * user pulled, so its models are discovered from the running server (chat's discover route), not listed.
   */
  list(): ModelInfo[] {
    const out: ModelInfo[] = [];
    for (const p of PROVIDERS) {
      if (!this.env.has(p.envVarName) || p.id === "ollama") continue;
      for (const m of getModels(p.id as KnownProvider) as Model<Api>[]) out.push(info(m));
    }
    for (const { model } of this.registered.values()) out.push(info(model));
    out.push(info(offlineModel));
    return out;
  }

  /**
   * Adds a model that is not in the catalog: an OpenAI-compatible endpoint, a gateway, or a scripted
   * test model. Returns its id (`provider/model`).
   */
  register(model: Model<Api>, options: { apiKey?: string } = {}): string {
    const id = formatModelId({ provider: model.provider, model: model.id });
    this.registered.set(id, { model, apiKey: options.apiKey });
    return id;
  }

  unregister(id: string): void {
    this.registered.delete(id);
  }

  /** The key sent with a request to this model's provider, from the environment. */
  apiKeyFor(model: Model<Api>): string | undefined {
    const registered = this.registered.get(formatModelId({ provider: model.provider, model: model.id }));
    if (registered) return registered.apiKey;
    if (model.provider === "ollama") return "ollama";
    if (AMBIENT_CREDENTIALS.has(model.provider)) return undefined;
    const catalog = providerInfo(model.provider);
    return catalog ? this.env.get(catalog.envVarName) : undefined;
  }

  stream(
    model: Model<Api>,
    context: Context,
    options: SimpleStreamOptions = {},
  ): AssistantMessageEventStream {
    return streamSimple(model, context, { ...options, apiKey: options.apiKey ?? this.apiKeyFor(model) });
  }

  complete(
    model: Model<Api>,
    context: Context,
    options: SimpleStreamOptions = {},
  ): Promise<AssistantMessage> {
    return completeSimple(model, context, { ...options, apiKey: options.apiKey ?? this.apiKeyFor(model) });
  }

  private ollamaModel(modelId: string): Model<Api> {
    const base = (this.env.get("OLLAMA_BASE_URL") ?? OLLAMA_DEFAULT_URL).replace(/\/+$/, "");
    return openAiCompatibleModel({
      id: modelId,
      name: `${modelId} (Ollama)`,
      provider: "ollama",
      baseUrl: base.endsWith("/v1") ? base : `${base}/v1`,
    });
  }
}

function info(m: Model<Api>): ModelInfo {
  return {
    id: formatModelId({ provider: m.provider, model: m.id }),
    provider: m.provider,
    name: m.name,
    reasoning: m.reasoning,
    contextWindow: m.contextWindow,
  };
}
