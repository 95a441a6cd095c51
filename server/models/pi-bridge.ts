/**
 * The bridge from ModelService to the pi SDK's AuthStorage and ModelRegistry, for one owner.
 *
 * pi resolves a request's key as: runtime override → stored credential → its own env lookup. Atrium puts
 * the provider variables it reads by name (EnvSource) in as runtime overrides and the owner's stored keys
 * (POST /api/chat/providers) as stored credentials, so the environment wins when both are set. Models
 * pi-ai does not know a key for (offline, Ollama, registered test models, ambient AWS/Google credentials)
 * get the placeholder pi expects before it will send a request.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Api, Model } from "@mariozechner/pi-ai";
import type { AuthStorage, ModelRegistry } from "@mariozechner/pi-coding-agent";
import type { EnvSource } from "../config/env.ts";
import { decodeBedrockCredentials } from "./bedrock.ts";
import { PROVIDERS, providerInfo } from "./catalog.ts";
import { parseModelId } from "./ids.ts";
import { loadPi, type PiSdk } from "./pi-sdk.ts";
import {
  type ModelInfo,
  type ModelService,
  modelInfo,
  type ProviderEntry,
  UnknownModelError,
} from "./service.ts";

export interface PiAuth {
  authStorage: AuthStorage;
  modelRegistry: ModelRegistry;
}

/** Providers whose SDK finds its own credentials; pi-ai marks them with this placeholder too. */
const AMBIENT_PLACEHOLDER = "<authenticated>";
const AMBIENT = new Set(["amazon-bedrock", "google-vertex"]);

export async function createPiAuth(
  env: EnvSource,
  storedKeys: Record<string, string>,
  modelsJsonPath?: string,
): Promise<PiAuth> {
  const { AuthStorage, ModelRegistry } = await loadPi();
  const authStorage = AuthStorage.inMemory();
  for (const [provider, key] of Object.entries(storedKeys)) {
    if (providerInfo(provider)) authStorage.set(provider, { type: "api_key", key });
  }
  for (const p of PROVIDERS) {
    const value = env.get(p.envVarName);
    if (!value) continue;
    if (AMBIENT.has(p.id)) authStorage.setRuntimeApiKey(p.id, AMBIENT_PLACEHOLDER);
    else if (p.id === "ollama") authStorage.setRuntimeApiKey(p.id, "ollama");
    else authStorage.setRuntimeApiKey(p.id, value);
  }
  const modelRegistry = modelsJsonPath
    ? ModelRegistry.create(authStorage, modelsJsonPath)
    : ModelRegistry.inMemory(authStorage);
  return { authStorage, modelRegistry };
}

/**
 * Makes sure pi will send a request to this model: providers without a key of their own (offline,
 * Ollama, registered models) get the key ModelService holds for them or a placeholder. Catalog
 * providers that need a real key are left alone, so pi reports the missing key clearly.
 */
export function ensureModelAuth(auth: PiAuth, models: ModelService, model: Model<Api>): void {
  const catalog = providerInfo(model.provider);
  if (catalog && catalog.id !== "ollama" && !AMBIENT.has(catalog.id)) return;
  if (catalog && AMBIENT.has(catalog.id)) {
    // The owner's stored Bedrock fields (server/models/bedrock.ts) are the key pi hands the provider.
    if (decodeBedrockCredentials(storedKey(auth, catalog.id))) return;
    auth.authStorage.setRuntimeApiKey(model.provider, AMBIENT_PLACEHOLDER);
    return;
  }
  const registered = models.apiKeyFor(model);
  // A provider from the owner's models.json brings its own key.
  if (!registered && auth.modelRegistry.getProviderAuthStatus(model.provider).configured) return;
  auth.authStorage.setRuntimeApiKey(model.provider, registered ?? model.provider);
}

/** The key the owner stored for a provider (not a runtime override). */
function storedKey(auth: PiAuth, provider: string): string | undefined {
  const credential = auth.authStorage.get(provider);
  return credential?.type === "api_key" ? credential.key : undefined;
}

/** The eight providers, configured when their variable is set or the owner stored a key. */
export function providersWithStoredKeys(
  models: ModelService,
  storedKeys: Record<string, string>,
): ProviderEntry[] {
  return models.providers().map((p) => ({ ...p, configured: p.configured || p.id in storedKeys }));
}

/** The providers an owner's pi `models.json` defines (empty when there is none or it does not parse). */
function customProviders(modelsJsonPath: string): Set<string> {
  if (!existsSync(modelsJsonPath)) return new Set();
  try {
    const parsed = JSON.parse(readFileSync(modelsJsonPath, "utf8")) as {
      providers?: Record<string, unknown>;
    };
    return new Set(Object.keys(parsed.providers ?? {}));
  } catch {
    return new Set();
  }
}

/** The models an owner added in pi's `models.json` (custom providers: local servers, proxies). */
export function customModels(pi: PiSdk, modelsJsonPath: string): Model<Api>[] {
  const providers = customProviders(modelsJsonPath);
  if (providers.size === 0) return [];
  const registry = pi.ModelRegistry.create(pi.AuthStorage.inMemory(), modelsJsonPath);
  return registry.getAll().filter((m) => providers.has(m.provider));
}

/** Loads pi only when the owner's models.json defines a provider. */
export async function customModelInfo(modelsJsonPath: string): Promise<ModelInfo[]> {
  if (customProviders(modelsJsonPath).size === 0) return [];
  return customModels(await loadPi(), modelsJsonPath).map((m) => modelInfo(m));
}

/** ModelService's model for an id, else one from the owner's models.json; rejects with UnknownModelError. */
export async function resolveForOwner(
  pi: PiSdk,
  models: ModelService,
  modelsJsonPath: string,
  id: string,
): Promise<Model<Api>> {
  try {
    return await models.resolve(id);
  } catch (error) {
    const ref = parseModelId(id);
    const custom =
      ref && customModels(pi, modelsJsonPath).find((m) => m.provider === ref.provider && m.id === ref.model);
    if (custom) return custom;
    throw error instanceof UnknownModelError ? error : new UnknownModelError(String(error));
  }
}
