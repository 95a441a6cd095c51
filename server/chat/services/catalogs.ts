/**
 * Chat catalogs: models (with the default and diagnostics), provider discovery, the eight providers and
 * the caller's stored keys, slash commands and pi resources. Resource paths and diagnostics name the
 * owner's folders (`workspace/AGENTS.md`), never the server's absolute paths. Settings: settings.ts.
 * Provider ids arrive checked against the eight by the schema (schemas/chat.ts `ProviderId`).
 */
import { basename, join } from "node:path";
import type { Api, KnownProvider, Model } from "@mariozechner/pi-ai";
import type { SettingsManager } from "@mariozechner/pi-coding-agent";
import type { EnvSource } from "../../config/env.ts";
import { AppError, invalidValue } from "../../http/errors.ts";
import type { OutboundRule } from "../../http/outbound/rule.ts";
import {
  BEDROCK_FIELDS,
  type BedrockCredentials,
  decodeBedrockCredentials,
  encodeBedrockCredentials,
} from "../../models/bedrock.ts";
import { type ProviderInfo, providerInfo } from "../../models/catalog.ts";
import { loadPiAi } from "../../models/pi-ai.ts";
import { customModelInfo, providersWithStoredKeys } from "../../models/pi-bridge.ts";
import { type ModelService, modelInfo } from "../../models/service.ts";
import { chatFolders, ensureChatFolders, publicPath, scrubPaths } from "../runtime/chat-folders.ts";
import type { ChatRuntimeHost } from "../runtime/host.ts";
import { settingsModelId } from "../runtime/pi-settings.ts";
import { loadResources, type OwnerResourceLoader, resourceDiagnostics } from "../runtime/resources.ts";
import type { ChatProviderKeyStore } from "../stores/provider-keys.ts";
import { discoverModels } from "./discover.ts";
import { type ProviderTestInput, testProvider } from "./provider-test.ts";
import type { ChatSettingsService } from "./settings.ts";

const BUILTIN_COMMANDS = [
  { name: "model", description: "Pick the model for this chat" },
  { name: "models", description: "List the available models" },
  { name: "scoped-models", description: "Choose the models to cycle through" },
  { name: "settings", description: "Open the settings" },
  { name: "new", description: "Start a new chat session" },
  { name: "session", description: "Show this session's details" },
  { name: "config", description: "Configure providers and resources" },
];

export interface ChatCatalogServiceDeps {
  /** Live sessions of an owner take a stored key at once. */
  host: Pick<ChatRuntimeHost, "ownerSessions">;
  providerKeys: ChatProviderKeyStore;
  models: ModelService;
  env: EnvSource;
  dataDir: string;
  settings: Pick<ChatSettingsService, "manager">;
  /** Where server-side requests may go (server/http/outbound/rule.ts). */
  outbound: OutboundRule;
}

export class ChatCatalogService {
  private readonly models: ModelService;
  private readonly env: EnvSource;
  private readonly keys: ChatProviderKeyStore;

  constructor(private readonly deps: ChatCatalogServiceDeps) {
    this.models = deps.models;
    this.env = deps.env;
    this.keys = deps.providerKeys;
  }

  private paths(owner: string) {
    return ensureChatFolders(chatFolders(this.deps.dataDir, owner));
  }

  private settingsOf(owner: string): Promise<SettingsManager> {
    return this.deps.settings.manager(owner);
  }

  /** Diagnostics with the owner's folders in place of server paths. */
  private diagnostics(owner: string, loader: OwnerResourceLoader): string[] {
    const paths = this.paths(owner);
    return resourceDiagnostics(loader).map((line) => scrubPaths(paths, this.deps.dataDir, line));
  }

  /**
   * The models the caller can use, each with the default thinking level, and the default: one that is
   * in the list (Ollama's is one it has pulled); a default that is not available is listed too, marked so.
   */
  async modelsFor(owner: string) {
    const settings = await this.settingsOf(owner);
    const stored = await this.keys.all(owner);
    const diagnostics: string[] = [];
    const unreachable = await this.models.refreshLocalModels();
    if (unreachable) diagnostics.push(unreachable);
    const chosen = await this.models.defaultModel(settingsModelId(settings), Object.keys(stored));
    const list = await this.models.list();
    const { getModels } = await loadPiAi();
    for (const id of Object.keys(stored)) {
      const info = providerInfo(id);
      if (!info || this.env.has(info.envVarName) || id === "ollama") continue;
      for (const m of getModels(id as KnownProvider) as Model<Api>[]) list.push(modelInfo(m));
    }
    list.push(...(await customModelInfo(join(this.paths(owner).agentDir, "models.json"))));
    if (chosen.diagnostic) diagnostics.push(`Default model from settings not used: ${chosen.diagnostic}`);
    if (chosen.source === "offline")
      diagnostics.push(
        "No provider is configured: the built-in offline model answers. Set a provider key to use a real model.",
      );
    const slash = chosen.id.indexOf("/");
    const [provider, id] = [chosen.id.slice(0, slash), chosen.id.slice(slash + 1)];
    if (!list.some((m) => m.key === chosen.id))
      list.unshift({
        key: chosen.id,
        provider,
        id,
        name: id,
        reasoning: false,
        input: ["text"],
        thinkingLevels: ["off"],
        available: false,
      });
    const level = settings.getDefaultThinkingLevel() ?? "medium";
    return {
      models: list.map((m) => ({ ...m, defaultThinkingLevel: level })),
      selectedModelKey: chosen.id,
      defaultProvider: provider,
      defaultModel: id,
      defaultThinkingLevel: level,
      diagnostics,
    };
  }

  /** What a provider offers now, as catalog entries (`providerId` is the reference client's name of `provider`). */
  async discover(owner: string, provider?: string) {
    const stored = await this.keys.all(owner);
    const configured = providersWithStoredKeys(this.models, stored).filter((p) => p.configured);
    const id = provider ?? configured.find((p) => p.id === "ollama")?.id ?? configured[0]?.id ?? "ollama";
    const info = known(id);
    const envKey = this.env.get(info.envVarName);
    const key = envKey ?? stored[id];
    // Only Ollama's address can come from someone other than the operator or the code: a stored URL,
    // or its default on this machine when the operator set none.
    const namedBy = info.id === "ollama" && envKey === undefined ? "user" : "operator";
    const found = await discoverModels(info, key, { rule: this.deps.outbound, namedBy });
    if (info.id === "ollama" && found.reachable && this.env.has(info.envVarName))
      this.models.noteOllamaModels(found.models.map((m) => m.id));
    const { getModels } = await loadPiAi();
    const catalog = info.id === "ollama" ? [] : (getModels(info.id as KnownProvider) as Model<Api>[]);
    const models = found.models.map((m) => {
      const known = catalog.find((c) => c.id === m.id);
      return known
        ? modelInfo(known)
        : {
            key: `${info.id}/${m.id}`,
            provider: info.id,
            id: m.id,
            name: m.name ?? m.id,
            reasoning: false,
            input: ["text" as const],
            thinkingLevels: ["off" as const],
            available: true,
          };
    });
    return { providerId: info.id, ...found, models };
  }

  /** The owner's stored model provider keys by provider id (for the OpenAI-compatible endpoint's calls). */
  storedKeys(owner: string) {
    return this.keys.all(owner);
  }

  async providers(owner: string) {
    const stored = await this.keys.all(owner);
    return {
      providers: providersWithStoredKeys(this.models, stored).map((p) => ({
        ...p,
        isConfigured: p.configured,
        // Which of Bedrock's fields are stored (all three or none), never their values.
        ...(p.id === BEDROCK
          ? {
              fields: BEDROCK_FIELDS.map((f) => ({
                ...f,
                set: Boolean(decodeBedrockCredentials(stored[p.id])),
              })),
            }
          : {}),
      })),
    };
  }

  /**
   * Stores (or clears) the caller's key (Bedrock: its three fields, as one value); live sessions use it
   * at once, so nothing needs a reload. Nothing stored is echoed. Everything is checked before anything
   * changes. Answers every provider again (`success`, `providers`) and this one's state.
   */
  async setProvider(owner: string, provider: string, input: ProviderKeyInput) {
    const info = known(provider);
    const key = keyToStore(provider, input);
    if (key) await this.keys.set(owner, provider, key);
    else await this.keys.clear(owner, provider);
    for (const live of this.deps.host.ownerSessions(owner)) {
      if (key) live.auth.authStorage.set(provider, { type: "api_key", key });
      else live.auth.authStorage.remove(provider);
      // A Bedrock session started without stored fields holds the ambient placeholder; the server's
      // own AWS variables keep it (the environment wins), else the stored fields take over.
      if (provider === BEDROCK && !this.env.has(info.envVarName))
        live.auth.authStorage.removeRuntimeApiKey(provider);
    }
    const { providers } = await this.providers(owner);
    const entry = providers.find((p) => p.id === provider);
    if (!entry) throw new AppError("internal", "provider vanished");
    return {
      success: true as const,
      providers,
      reloadRequired: false,
      ok: true as const,
      provider: entry,
      stored: Boolean(key),
      envOverrides: this.env.has(info.envVarName),
    };
  }

  /**
   * One cheap request to the provider with the typed or stored key, answered in words, under the
   * server's outbound rule (services/provider-test.ts).
   */
  async testProvider(owner: string, provider: string, input: ProviderTestInput) {
    const info = known(provider);
    return testProvider(
      {
        info,
        envKey: this.env.get(info.envVarName),
        storedKey: (await this.keys.all(owner))[provider],
        outbound: this.deps.outbound,
      },
      input,
    );
  }

  /** Clears the caller's stored key (the environment variable, if set, still configures it). */
  removeProvider(owner: string, provider: string) {
    return this.setProvider(owner, provider, { apiKey: null });
  }

  async commands(owner: string) {
    const settings = await this.settingsOf(owner);
    const loader = await loadResources(this.paths(owner), settings);
    const commands: {
      name: string;
      description: string;
      argumentHint?: string;
      source: "builtin" | "skill" | "prompt" | "extension";
      passThrough?: boolean;
    }[] = BUILTIN_COMMANDS.map((c) => ({ ...c, source: "builtin" as const }));
    if (settings.getEnableSkillCommands()) {
      for (const s of loader.getSkills().skills)
        commands.push({
          name: `skill:${s.name}`,
          description: s.description,
          source: "skill",
          passThrough: true,
        });
      for (const p of loader.getPrompts().prompts)
        commands.push({
          name: p.name,
          description: p.description,
          ...(p.argumentHint ? { argumentHint: p.argumentHint } : {}),
          source: "prompt",
          passThrough: true,
        });
    }
    for (const ext of loader.getExtensions().extensions)
      for (const c of ext.commands.values())
        commands.push({
          name: c.name,
          description: c.description ?? "",
          source: "extension",
          passThrough: true,
        });
    return { commands, diagnostics: this.diagnostics(owner, loader) };
  }

  async resources(owner: string) {
    const settings = await this.settingsOf(owner);
    const paths = this.paths(owner);
    // Skills, prompts, themes and context files come with labelled paths (`workspace/AGENTS.md`);
    // extensions are paths pi found in the agent dir, shown the same way.
    const loader = await loadResources(paths, settings);
    const shown = (path: string) => publicPath(paths, path);
    // Every entry has a name; optional fields are left out rather than null (clients refuse null).
    return {
      packages: settings.getPackages().map((p) => {
        const source = typeof p === "string" ? p : p.source;
        return { name: source, source, activationStatus: "active" as const };
      }),
      skills: loader.getSkills().skills.map((s) => ({
        name: s.name,
        description: s.description,
        path: s.filePath,
        filePath: s.filePath,
        activationStatus: "active" as const,
      })),
      prompts: loader.getPrompts().prompts.map((p) => ({
        name: p.name,
        description: p.description,
        ...(p.argumentHint ? { argumentHint: p.argumentHint } : {}),
        path: p.filePath,
        filePath: p.filePath,
        activationStatus: "active" as const,
      })),
      extensions: loader.getExtensions().extensions.map((e) => ({
        name: basename(e.path).replace(/\.(ts|js|mjs)$/, "") || shown(e.path),
        path: shown(e.path),
        commands: [...e.commands.keys()],
        tools: [...e.tools.keys()],
        activationStatus: "active" as const,
      })),
      themes: loader.getThemes().themes.map((t) => ({
        name: t.name ?? (t.sourcePath ? basename(t.sourcePath) : "theme"),
        ...(t.sourcePath ? { path: t.sourcePath } : {}),
        activationStatus: "active" as const,
      })),
      agentsFiles: loader.getAgentsFiles().agentsFiles.map((f) => ({
        name: basename(f.path),
        path: f.path,
        bytes: f.content.length,
      })),
      diagnostics: this.diagnostics(owner, loader),
    };
  }
}

const BEDROCK = "amazon-bedrock";

/** What POST /api/chat/providers may carry: a key, or Bedrock's three fields. */
export interface ProviderKeyInput {
  apiKey?: string | null;
  credentials?: { accessKeyId?: string; secretAccessKey?: string; region?: string };
}

const FIELD_RULES: Record<keyof BedrockCredentials, { pattern: RegExp; what: string }> = {
  accessKeyId: { pattern: /^[A-Z0-9]{16,128}$/, what: "capital letters and digits (AKIA…)" },
  secretAccessKey: { pattern: /^[\x21-\x7e]{16,4096}$/, what: "at least 16 printable characters, no spaces" },
  region: { pattern: /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/, what: "an AWS region such as us-east-1" },
};

/** The value to store (undefined: clear), or a 400 naming the field at fault. */
function keyToStore(provider: string, input: ProviderKeyInput): string | undefined {
  const apiKey = input.apiKey?.trim();
  if (provider !== BEDROCK) {
    if (input.credentials)
      throw invalidValue(["body", "credentials"], "only Amazon Bedrock takes credentials; send apiKey");
    return apiKey || undefined;
  }
  if (apiKey)
    throw invalidValue(
      ["body", "credentials"],
      "Amazon Bedrock needs credentials {accessKeyId, secretAccessKey, region}, not one apiKey",
    );
  if (!input.credentials) return undefined;
  const fields = {} as BedrockCredentials;
  for (const { name, label } of BEDROCK_FIELDS) {
    const value = input.credentials[name]?.trim();
    if (!value) throw invalidValue(["body", "credentials", name], `Field required: ${label}`);
    const rule = FIELD_RULES[name];
    if (!rule.pattern.test(value))
      throw invalidValue(["body", "credentials", name], `${label} must be ${rule.what}`);
    fields[name] = value;
  }
  return encodeBedrockCredentials(fields);
}

/** The catalog entry of a provider id the schema let through (one of the eight). */
function known(id: string): ProviderInfo {
  const info = providerInfo(id);
  if (!info) throw new AppError("internal", `provider '${id}' is not in the catalog`);
  return info;
}
