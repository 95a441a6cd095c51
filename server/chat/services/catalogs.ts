/**
 * Chat catalogs: models (with the default and diagnostics), provider discovery, the eight providers and
 * the caller's stored keys, slash commands and pi resources. Resource paths and diagnostics name the
 * owner's folders (`workspace/AGENTS.md`), never the server's absolute paths. Settings: settings.ts.
 * Provider ids arrive checked against the eight by the schema (schemas/chat.ts `ProviderId`).
 */
import { join } from "node:path";
import { type Api, getModels, type KnownProvider, type Model } from "@mariozechner/pi-ai";
import type { DefaultResourceLoader, SettingsManager } from "@mariozechner/pi-coding-agent";
import type { EnvSource } from "../../config/env.ts";
import { AppError } from "../../http/errors.ts";
import { type ProviderInfo, providerInfo } from "../../models/catalog.ts";
import { customModelInfo, providersWithStoredKeys } from "../../models/pi-bridge.ts";
import type { ModelService } from "../../models/service.ts";
import type { ChatRuntimeHost } from "../runtime/host.ts";
import { ensureOwnerDirs, ownerPaths, publicPath, scrubPaths } from "../runtime/owner-paths.ts";
import { settingsModelId } from "../runtime/pi-settings.ts";
import { loadResources, resourceDiagnostics } from "../runtime/resources.ts";
import type { ChatProviderKeyStore } from "../stores/provider-keys.ts";
import { discoverModels } from "./discover.ts";
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
    return ensureOwnerDirs(ownerPaths(this.deps.dataDir, owner));
  }

  private settingsOf(owner: string): Promise<SettingsManager> {
    return this.deps.settings.manager(owner);
  }

  /** Diagnostics with the owner's folders in place of server paths. */
  private diagnostics(owner: string, loader: DefaultResourceLoader): string[] {
    const paths = this.paths(owner);
    return resourceDiagnostics(loader).map((line) => scrubPaths(paths, this.deps.dataDir, line));
  }

  async modelsFor(owner: string) {
    const settings = await this.settingsOf(owner);
    const stored = this.keys.all(owner);
    const chosen = this.models.defaultModel(settingsModelId(settings));
    const list = this.models.list();
    for (const id of Object.keys(stored)) {
      const info = providerInfo(id);
      if (!info || this.env.has(info.envVarName) || id === "ollama") continue;
      for (const m of getModels(id as KnownProvider) as Model<Api>[])
        list.push({
          id: `${m.provider}/${m.id}`,
          provider: m.provider,
          name: m.name,
          reasoning: m.reasoning,
          contextWindow: m.contextWindow,
        });
    }
    list.push(...(await customModelInfo(join(this.paths(owner).agentDir, "models.json"))));
    const diagnostics: string[] = [];
    if (chosen.diagnostic) diagnostics.push(`Default model from settings not used: ${chosen.diagnostic}`);
    if (chosen.source === "offline")
      diagnostics.push(
        "No provider is configured: the built-in offline model answers. Set a provider key to use a real model.",
      );
    const slash = chosen.id.indexOf("/");
    return {
      models: list.map((m) => ({ ...m, key: m.id })),
      selectedModelKey: chosen.id,
      defaultProvider: chosen.id.slice(0, slash),
      defaultModel: chosen.id.slice(slash + 1),
      defaultThinkingLevel: settings.getDefaultThinkingLevel() ?? "medium",
      diagnostics,
    };
  }

  async discover(owner: string, provider?: string) {
    const stored = this.keys.all(owner);
    const configured = providersWithStoredKeys(this.models, stored).filter((p) => p.configured);
    const id = provider ?? configured.find((p) => p.id === "ollama")?.id ?? configured[0]?.id ?? "ollama";
    const info = known(id);
    const key = this.env.get(info.envVarName) ?? stored[id];
    return discoverModels(info, key);
  }

  providers(owner: string) {
    return { providers: providersWithStoredKeys(this.models, this.keys.all(owner)) };
  }

  /** Stores (or clears) the caller's key; live sessions pick it up at once. The key is never echoed. */
  setProvider(owner: string, provider: string, apiKey: string | null | undefined) {
    const info = known(provider);
    const key = apiKey?.trim();
    if (key) this.keys.set(owner, provider, key);
    else this.keys.clear(owner, provider);
    for (const live of this.deps.host.ownerSessions(owner)) {
      if (key) live.auth.authStorage.set(provider, { type: "api_key", key });
      else live.auth.authStorage.remove(provider);
    }
    const entry = this.providers(owner).providers.find((p) => p.id === provider);
    if (!entry) throw new AppError("internal", "provider vanished");
    return {
      ok: true as const,
      provider: entry,
      stored: Boolean(key),
      envOverrides: this.env.has(info.envVarName),
    };
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
    const loader = await loadResources(paths, settings);
    const shown = (path: string) => publicPath(paths, path);
    return {
      packages: settings.getPackages(),
      skills: loader
        .getSkills()
        .skills.map((s) => ({ name: s.name, description: s.description, filePath: shown(s.filePath) })),
      prompts: loader.getPrompts().prompts.map((p) => ({
        name: p.name,
        description: p.description,
        argumentHint: p.argumentHint,
        filePath: shown(p.filePath),
      })),
      extensions: loader.getExtensions().extensions.map((e) => ({
        path: shown(e.path),
        commands: [...e.commands.keys()],
        tools: [...e.tools.keys()],
      })),
      themes: loader
        .getThemes()
        .themes.map((t) => ({ name: t.name ?? null, path: t.sourcePath ? shown(t.sourcePath) : null })),
      agentsFiles: loader
        .getAgentsFiles()
        .agentsFiles.map((f) => ({ path: shown(f.path), bytes: f.content.length })),
      diagnostics: this.diagnostics(owner, loader),
    };
  }
}

/** The catalog entry of a provider id the schema let through (one of the eight). */
function known(id: string): ProviderInfo {
  const info = providerInfo(id);
  if (!info) throw new AppError("internal", `provider '${id}' is not in the catalog`);
  return info;
}
