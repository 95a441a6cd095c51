/**
 * The model layer every family uses: pi-ai's registry behind `provider/model` ids, the eight-provider
 * catalog with `configured` flags, default resolution (settings → first configured provider → offline),
 * and streaming with the provider's key injected from the environment (never from pi-ai's own lookup of
 * process.env, so the policy's "named variables only" rule holds).
 */

import type {
  Api,
  AssistantMessage,
  AssistantMessageEventStream,
  Context,
  KnownProvider,
  Model,
  ModelThinkingLevel,
  SimpleStreamOptions,
} from "@mariozechner/pi-ai";
import type { EnvSource } from "../config/env.ts";
import { PROVIDERS, providerInfo } from "./catalog.ts";
import { openAiCompatibleModel } from "./compatible.ts";
import { formatModelId, OFFLINE_MODEL_ID, parseModelId } from "./ids.ts";
import { hasOllamaModel, isLocalEndpoint, localEndpointRefusal, ollamaRoot, ollamaTags } from "./local.ts";
import { OFFLINE_API, offlineModel } from "./offline.ts";
import { loadPiAi, piAi } from "./pi-ai.ts";
import { failedMessage } from "./reply.ts";

export class UnknownModelError extends Error {
  override name = "UnknownModelError";
}

export interface ProviderEntry {
  id: string;
  name: string;
  envVarName: string;
  configured: boolean;
}

/** A model as catalogs list it (GET /api/chat/models). */
export interface ModelInfo {
  /** `provider/model`: what a request names. */
  key: string;
  provider: string;
  /** The model's id within its provider. */
  id: string;
  name: string;
  reasoning: boolean;
  input: ("text" | "image")[];
  contextWindow?: number;
  maxTokens?: number;
  /** The thinking levels the model supports, from pi-ai's catalog (`off` only when it does not reason). */
  thinkingLevels: ModelThinkingLevel[];
  /** Its provider is configured (a key, or a local server that lists it). */
  available: boolean;
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

/** How long what Ollama listed is trusted before asking again. */
const LOCAL_LIST_TTL_MS = 15_000;
/** Providers whose SDK finds its own credentials (AWS chain, Google ADC); no key is passed. */
const AMBIENT_CREDENTIALS = new Set(["amazon-bedrock", "google-vertex"]);

export class ModelService {
  private readonly registered = new Map<string, Registered>();
  /** What Ollama listed last, or why it could not (both kept a few seconds; undefined: not asked yet). */
  private ollama: { ids: string[]; failure?: string; at: number } | undefined;

  /** Nothing of pi-ai loads here: the first method that needs a model loads it (pi-ai.ts). */
  constructor(private readonly env: EnvSource) {}

  providers(): ProviderEntry[] {
    return PROVIDERS.map(({ id, name, envVarName }) => ({
      id,
      name,
      envVarName,
      configured: this.env.has(envVarName),
    }));
  }

  /**
   * settings → first configured provider → first provider the caller stored a key for → offline. A
   * preferred id that does not resolve (or that Ollama has not pulled) is reported. Ollama's default is
   * one it has pulled, once it has listed them (`refreshLocalModels`): its catalog default when pulled,
   * else the first it lists. Checking the preferred id loads pi-ai, hence async.
   */
  async defaultModel(preferred?: string, storedKeys: readonly string[] = []): Promise<DefaultModel> {
    if (!preferred) return this.fallbackModel(storedKeys);
    try {
      await this.resolve(preferred);
      const ref = parseModelId(preferred);
      const pulled = this.ollama?.ids;
      if (ref?.provider === "ollama" && pulled?.length && !hasOllamaModel(pulled, ref.model))
        throw new Error(`Ollama has not pulled '${ref.model}'; it has ${pulled.join(", ")}`);
      return { id: preferred, source: "settings" };
    } catch (error) {
      return { ...this.fallbackModel(storedKeys), diagnostic: (error as Error).message };
    }
  }

  /**
   * The default when no model is preferred: first configured provider → first provider the caller
   * stored a key for → offline. Needs no catalog, so it stays synchronous (pi-ai need not be loaded).
   */
  fallbackModel(storedKeys: readonly string[] = []): DefaultModel {
    const first = PROVIDERS.find((p) => this.env.has(p.envVarName));
    if (first?.id === "ollama") {
      const pulled = this.ollama?.ids ?? [];
      const model =
        pulled.length && !hasOllamaModel(pulled, first.defaultModel) ? pulled[0] : first.defaultModel;
      return { id: `ollama/${model}`, source: "provider" };
    }
    if (first) return { id: `${first.id}/${first.defaultModel}`, source: "provider" };
    const stored = PROVIDERS.find((p) => p.id !== "ollama" && storedKeys.includes(p.id));
    if (stored) return { id: `${stored.id}/${stored.defaultModel}`, source: "provider" };
    return { id: OFFLINE_MODEL_ID, source: "offline" };
  }

  /**
   * Asks Ollama (when OLLAMA_BASE_URL is set) what it has pulled, at most every few seconds; returns why
   * it could not, if it could not. Catalogs and defaults then use the answer.
   */
  async refreshLocalModels(): Promise<string | undefined> {
    if (!this.env.has("OLLAMA_BASE_URL")) return undefined;
    // A failure is kept as long as an answer: an Ollama that never answers costs one wait per window.
    if (this.ollama && Date.now() - this.ollama.at < LOCAL_LIST_TTL_MS) return this.ollama.failure;
    const root = ollamaRoot(this.env.get("OLLAMA_BASE_URL"));
    try {
      this.noteOllamaModels((await ollamaTags(root, 2000)).map((m) => m.id));
      return undefined;
    } catch (error) {
      const failure =
        (error as Error).name === "TimeoutError"
          ? `Ollama did not answer at ${root}`
          : `Ollama is unreachable at ${root}: is it running?`;
      this.ollama = { ids: [], failure, at: Date.now() };
      return failure;
    }
  }

  /** Records what Ollama listed (discovery calls this too). */
  noteOllamaModels(ids: string[]): void {
    this.ollama = { ids, at: Date.now() };
  }

  /** The models Ollama listed last (empty when it has not answered). */
  ollamaModels(): string[] {
    return this.ollama?.ids ?? [];
  }

  /** Why a local model's server cannot be reached now (refused, no answer), naming it and its URL. */
  localRefusal(model: Model<Api>): Promise<string | undefined> {
    if (!onLocalServer(model)) return Promise.resolve(undefined);
    const name = providerInfo(model.provider)?.name ?? `The local server '${model.provider}'`;
    return localEndpointRefusal(name, model.baseUrl);
  }

  /**
   * The pi-ai model for an id; rejects with UnknownModelError with a message fit for the caller. Loads
   * pi-ai first (once), so `stream` can run on what it returns.
   */
  async resolve(id: string): Promise<Model<Api>> {
    const pi = await loadPiAi();
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
    const models = pi.getModels(info.id as KnownProvider) as Model<Api>[];
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
  async list(): Promise<ModelInfo[]> {
    const pi = await loadPiAi();
    const out: ModelInfo[] = [];
    for (const p of PROVIDERS) {
      if (!this.env.has(p.envVarName) || p.id === "ollama") continue;
      for (const m of pi.getModels(p.id as KnownProvider) as Model<Api>[]) out.push(modelInfo(m));
    }
    if (this.env.has("OLLAMA_BASE_URL"))
      for (const id of this.ollamaModels()) out.push(modelInfo(this.ollamaModel(id)));
    for (const { model } of this.registered.values()) out.push(modelInfo(model));
    out.push(modelInfo(offlineModel));
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

  /**
   * Streams a reply. A model on a local server is probed first: one that refuses the connection ends
   * the stream at once with an error naming it and its URL, instead of the SDK's retries. The model
   * comes from `resolve`, which has loaded pi-ai.
   */
  stream(
    model: Model<Api>,
    context: Context,
    options: SimpleStreamOptions = {},
  ): AssistantMessageEventStream {
    const { streamSimple, createAssistantMessageEventStream } = piAi();
    const withKey = { ...options, apiKey: options.apiKey ?? this.apiKeyFor(model) };
    if (!onLocalServer(model)) return streamSimple(model, context, withKey);
    const out = createAssistantMessageEventStream();
    void (async () => {
      const refused = await this.localRefusal(model);
      if (refused) {
        const failed = failedMessage(model, refused);
        out.push({ type: "error", reason: "error", error: failed });
        out.end(failed);
        return;
      }
      const inner = streamSimple(model, context, withKey);
      for await (const event of inner) out.push(event);
      out.end(await inner.result());
    })();
    return out;
  }

  async complete(
    model: Model<Api>,
    context: Context,
    options: SimpleStreamOptions = {},
  ): Promise<AssistantMessage> {
    const { completeSimple } = await loadPiAi();
    if (!onLocalServer(model))
      return completeSimple(model, context, { ...options, apiKey: options.apiKey ?? this.apiKeyFor(model) });
    return this.stream(model, context, options).result();
  }

  private ollamaModel(modelId: string): Model<Api> {
    return openAiCompatibleModel({
      id: modelId,
      name: `${modelId} (Ollama)`,
      provider: "ollama",
      baseUrl: `${ollamaRoot(this.env.get("OLLAMA_BASE_URL"))}/v1`,
    });
  }
}

/** A model served over the network by this machine or a private one (not in-process, not a cloud API). */
function onLocalServer(model: Model<Api>): boolean {
  // Scripted and offline models answer in-process; their URLs are placeholders.
  if (model.api === OFFLINE_API || model.api.startsWith("faux")) return false;
  return isLocalEndpoint(model.baseUrl);
}

/** A model's catalog entry; pi-ai must be loaded (every caller has listed or resolved first). */
export function modelInfo(m: Model<Api>, available = true): ModelInfo {
  return {
    key: formatModelId({ provider: m.provider, model: m.id }),
    provider: m.provider,
    id: m.id,
    name: m.name,
    reasoning: Boolean(m.reasoning),
    input: m.input.filter((i) => i === "text" || i === "image"),
    ...(m.contextWindow ? { contextWindow: m.contextWindow } : {}),
    ...(m.maxTokens ? { maxTokens: m.maxTokens } : {}),
    thinkingLevels: piAi().getSupportedThinkingLevels(m),
    available,
  };
}
