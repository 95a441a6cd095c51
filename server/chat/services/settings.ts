/**
 * Chat settings: an owner's effective settings (pi's defaults under their own), and a partial update
 * merged into `pi-agent/<owner>/settings.json`, the one file pi reads them from (runtime/pi-settings.ts).
 *
 * `extensions` and `packages` name code the server would load into its own process, so an update may
 * not change them in protected mode, and in local mode only to paths inside the owner's pi agent dir: an
 * HTTP client or a web page can write files into the workspace (the Files API), never into the agent
 * dir. A refused change is left out (the field keeps its value) and named in `diagnostics`, so a settings
 * form that sends every field still saves the others; sending a field's current value is no change.
 *
 * `skills`, `prompts` and `themes` name folders and files the server reads for the model's context: an
 * update is accepted only when every entry is a path inside the owner's pi agent dir, relative to it
 * (400 otherwise). That is decided from the text alone, so the answer is the same whether a path
 * exists or not: the settings cannot be used to learn what is on the host or to have it listed.
 *
 * GET answers what an update answers: diagnostics, effective settings, the owner's own (`project`, only
 * the keys an update may set), the file relative to the owner's folders, and the update's impact.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { SettingsManager } from "@mariozechner/pi-coding-agent";
import { Value } from "@sinclair/typebox/value";
import { ChatSettingsUpdate } from "../../../schemas/chat.ts";
import { AppError } from "../../http/errors.ts";
import type { ModelService } from "../../models/service.ts";
import { chatFolders, ensureChatFolders, publicPath } from "../runtime/chat-folders.ts";
import type { ChatRuntimeHost } from "../runtime/host.ts";
import { insideAgentDir } from "../runtime/owner-resources.ts";
import {
  CODE_KEYS,
  type CodePolicy,
  codeEntryRefusal,
  ownerSettings,
  settingsFile,
} from "../runtime/pi-settings.ts";

const RELOAD_KEYS = ["packages", "extensions", "skills", "prompts", "themes", "enableSkillCommands"];
const RESOURCE_KEYS = ["skills", "prompts", "themes"] as const;
const NESTED_KEYS = new Set(["compaction", "retry"]);

export interface ChatSettingsServiceDeps {
  /** Live sessions of an owner reload their settings after an update. */
  host: Pick<ChatRuntimeHost, "ownerSessions">;
  models: Pick<ModelService, "defaultModel">;
  dataDir: string;
  /** Local mode: settings may name extensions and packages inside the owner's agent dir. */
  allowCode: boolean;
}

export class ChatSettingsService {
  constructor(private readonly deps: ChatSettingsServiceDeps) {}

  private paths(owner: string) {
    return ensureChatFolders(chatFolders(this.deps.dataDir, owner));
  }

  policy(owner: string): CodePolicy {
    return { agentDir: this.paths(owner).agentDir, allowCode: this.deps.allowCode };
  }

  /** The owner's pi SettingsManager (async: pi loads on first use, see pi-sdk.ts). */
  manager(owner: string): Promise<SettingsManager> {
    return ownerSettings(this.policy(owner));
  }

  async settings(owner: string) {
    const settings = await this.manager(owner);
    const file = settingsFile(this.policy(owner).agentDir);
    return {
      diagnostics: settings.drainErrors().map((e) => `${e.scope}: ${e.error.message}`),
      effective: effective(settings),
      project: editable(readJson(file)),
      projectPath: publicPath(this.paths(owner), file),
      updateImpact: { newSessionRecommended: false, resourceReloadRequired: false },
    };
  }

  /**
   * Merges a partial update into the owner's settings file; live sessions reload their settings. The
   * schema already refused unknown keys and an empty update.
   */
  async update(owner: string, request: Record<string, unknown>) {
    const policy = this.policy(owner);
    const diagnostics: string[] = [];
    const current = effective(await this.manager(owner));
    refuseResourcePathsOutside(request, current);
    const update = withoutRefusedCode(request, current, policy, diagnostics);
    // The reference client's highest level; pi's highest is xhigh.
    if (update.defaultThinkingLevel === "max") update.defaultThinkingLevel = "xhigh";
    const keys = Object.keys(update).filter((k) => update[k] !== undefined);
    const file = settingsFile(policy.agentDir);
    const project = readJson(file);
    for (const [key, value] of Object.entries(update)) {
      if (value === undefined) continue;
      if (value === null)
        delete project[key]; // enabledModels: null removes the override
      else
        project[key] =
          NESTED_KEYS.has(key) && isObject(project[key])
            ? { ...(project[key] as object), ...(value as object) }
            : value;
    }
    if (keys.length > 0) {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, `${JSON.stringify(project, null, 2)}\n`);
    }
    const provider = project.defaultProvider as string | undefined;
    const model = project.defaultModel as string | undefined;
    if (provider && model && (keys.includes("defaultProvider") || keys.includes("defaultModel"))) {
      const chosen = await this.deps.models.defaultModel(`${provider}/${model}`);
      if (chosen.diagnostic) diagnostics.push(`defaultModel: ${chosen.diagnostic}`);
    }
    for (const live of this.deps.host.ownerSessions(owner)) {
      await live.settings.reload();
      live.session.setSteeringMode(live.settings.getSteeringMode());
      live.session.setFollowUpMode(live.settings.getFollowUpMode());
    }
    const settings = await this.manager(owner);
    diagnostics.push(...settings.drainErrors().map((e) => `${e.scope}: ${e.error.message}`));
    return {
      diagnostics,
      effective: effective(settings),
      project: editable(project),
      /** Relative to the owner's folders (`pi-agent/settings.json`), never the server's path. */
      projectPath: publicPath(this.paths(owner), file),
      updateImpact: {
        newSessionRecommended: keys.length > 0,
        resourceReloadRequired: keys.some((k) => RELOAD_KEYS.includes(k)),
      },
    };
  }
}

/**
 * 400 when a `skills`, `prompts` or `themes` entry is anything but a path inside the agent dir (relative
 * to it; no `~`, no filter pattern). Sending a field's current value is no change and passes.
 */
function refuseResourcePathsOutside(update: Record<string, unknown>, current: Record<string, unknown>) {
  for (const key of RESOURCE_KEYS) {
    const entries = update[key];
    if (!Array.isArray(entries) || isDeepStrictEqual(entries, current[key])) continue;
    const bad = entries.findIndex(
      (entry) => typeof entry !== "string" || insideAgentDir(entry) === undefined,
    );
    if (bad !== -1)
      throw new AppError(
        "invalid",
        `settings.${key}[${bad}]: only paths inside your pi agent dir are accepted, relative to it (like "${key}/mine"); no absolute path, "..", "~" or filter pattern`,
        { status: 400 },
      );
  }
}

/**
 * The update without the `extensions` / `packages` changes the policy refuses (each named in
 * `diagnostics`); a field sent with its current value is no change and is dropped quietly.
 */
function withoutRefusedCode(
  update: Record<string, unknown>,
  current: Record<string, unknown>,
  policy: CodePolicy,
  diagnostics: string[],
): Record<string, unknown> {
  const kept = { ...update };
  for (const key of CODE_KEYS) {
    const entries = update[key];
    if (!Array.isArray(entries)) continue;
    if (isDeepStrictEqual(entries, current[key])) {
      delete kept[key];
      continue;
    }
    const refused = entries
      .map((entry, i) => ({ i, reason: codeEntryRefusal(key, entry, policy) }))
      .filter((r) => r.reason);
    if (refused.length === 0) continue;
    delete kept[key];
    diagnostics.push(
      policy.allowCode
        ? `${key} not changed: ${refused.map((r) => `entry ${r.i}: ${r.reason}`).join("; ")}`
        : `${key} not changed: this server (protected mode) loads no code an API client names`,
    );
  }
  return kept;
}

/** The keys of a settings file an update may set, with values of the right type (the rest is pi's own). */
function editable(file: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(ChatSettingsUpdate.properties))
    if (file[key] !== undefined && Value.Check(schema, file[key])) out[key] = file[key];
  return out;
}

/** Every editable setting, pi's defaults under the owner's; an unset optional one is left out. */
export function effective(s: SettingsManager) {
  const { enabled, maxRetries, baseDelayMs } = s.getRetrySettings();
  const { enabled: on, reserveTokens, keepRecentTokens } = s.getCompactionSettings();
  const provider = s.getDefaultProvider();
  const model = s.getDefaultModel();
  const enabledModels = s.getEnabledModels();
  const transport = s.getTransport();
  return {
    compaction: { enabled: on, reserveTokens, keepRecentTokens },
    retry: { enabled, maxRetries, baseDelayMs },
    ...(provider ? { defaultProvider: provider } : {}),
    ...(model ? { defaultModel: model } : {}),
    defaultThinkingLevel: s.getDefaultThinkingLevel() ?? "medium",
    ...(enabledModels ? { enabledModels } : {}),
    extensions: s.getExtensionPaths(),
    packages: s.getPackages(),
    prompts: s.getPromptTemplatePaths(),
    skills: s.getSkillPaths(),
    themes: s.getThemePaths(),
    transport: transport === "sse" || transport === "websocket" ? transport : ("auto" as const),
    steeringMode: s.getSteeringMode(),
    followUpMode: s.getFollowUpMode(),
    enableSkillCommands: s.getEnableSkillCommands(),
  };
}

function readJson(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  try {
    const value = JSON.parse(readFileSync(path, "utf8"));
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
