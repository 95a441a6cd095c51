/**
 * Chat settings: an owner's effective settings (pi's defaults under their own), and a partial update
 * merged into `pi-agent/<owner>/settings.json`, the one file pi reads them from (runtime/pi-settings.ts).
 *
 * `extensions` and `packages` name code the server would load into its own process, so an update may
 * not set them in protected mode (403), and in local mode only to paths inside the owner's pi agent
 * dir (400 naming the entry): an HTTP client or a web page can write files into the workspace (the
 * Files API), never into the agent dir.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { SettingsManager } from "@mariozechner/pi-coding-agent";
import { AppError } from "../../http/errors.ts";
import type { Issue } from "../../http/validation.ts";
import type { ModelService } from "../../models/service.ts";
import type { ChatRuntimeHost } from "../runtime/host.ts";
import { ensureOwnerDirs, ownerPaths, publicPath } from "../runtime/owner-paths.ts";
import {
  CODE_KEYS,
  type CodePolicy,
  codeEntryRefusal,
  ownerSettings,
  settingsFile,
} from "../runtime/pi-settings.ts";
import { invalidRequest } from "./invalid.ts";

const RELOAD_KEYS = ["packages", "extensions", "skills", "prompts", "themes", "enableSkillCommands"];
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
    return ensureOwnerDirs(ownerPaths(this.deps.dataDir, owner));
  }

  policy(owner: string): CodePolicy {
    return { agentDir: this.paths(owner).agentDir, allowCode: this.deps.allowCode };
  }

  /** The owner's pi SettingsManager (async: pi loads on first use, see pi-sdk.ts). */
  manager(owner: string): Promise<SettingsManager> {
    return ownerSettings(this.policy(owner));
  }

  async settings(owner: string) {
    return effective(await this.manager(owner));
  }

  /**
   * Merges a partial update into the owner's settings file; live sessions reload their settings. The
   * schema already refused unknown keys and an empty update.
   */
  async update(owner: string, update: Record<string, unknown>) {
    const keys = Object.keys(update).filter((k) => update[k] !== undefined);
    const policy = this.policy(owner);
    refuseCode(update, policy);
    const file = settingsFile(policy.agentDir);
    const project = readJson(file);
    for (const [key, value] of Object.entries(update)) {
      if (value === undefined) continue;
      project[key] =
        NESTED_KEYS.has(key) && isObject(project[key])
          ? { ...(project[key] as object), ...(value as object) }
          : value;
    }
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, `${JSON.stringify(project, null, 2)}\n`);
    const diagnostics: string[] = [];
    const provider = project.defaultProvider as string | undefined;
    const model = project.defaultModel as string | undefined;
    if (provider && model && (keys.includes("defaultProvider") || keys.includes("defaultModel"))) {
      const chosen = this.deps.models.defaultModel(`${provider}/${model}`);
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
      project,
      /** Relative to the owner's folders (`pi-agent/settings.json`), never the server's path. */
      projectPath: publicPath(this.paths(owner), file),
      updateImpact: {
        newSessionRecommended: keys.length > 0,
        resourceReloadRequired: keys.some((k) => RELOAD_KEYS.includes(k)),
      },
    };
  }
}

/** Throws when the update names code the policy does not let settings name. */
function refuseCode(update: Record<string, unknown>, policy: CodePolicy): void {
  const named = CODE_KEYS.filter(
    (key) => Array.isArray(update[key]) && (update[key] as unknown[]).length > 0,
  );
  if (named.length === 0) return;
  if (!policy.allowCode)
    throw new AppError(
      "forbidden",
      `Settings cannot name ${named.join(" or ")} on this server (protected mode): the server loads no code an API client names.`,
    );
  const issues: Issue[] = [];
  for (const key of named)
    (update[key] as unknown[]).forEach((entry, i) => {
      const reason = codeEntryRefusal(key, entry, policy);
      if (reason) issues.push({ loc: ["body", "settings", key, i], msg: reason, type: "value_error" });
    });
  const [first, ...more] = issues;
  if (first) throw invalidRequest(first, ...more);
}

export function effective(s: SettingsManager) {
  return {
    compaction: s.getCompactionSettings(),
    retry: s.getRetrySettings(),
    defaultProvider: s.getDefaultProvider() ?? null,
    defaultModel: s.getDefaultModel() ?? null,
    defaultThinkingLevel: s.getDefaultThinkingLevel() ?? "medium",
    enabledModels: s.getEnabledModels() ?? null,
    extensions: s.getExtensionPaths(),
    packages: s.getPackages(),
    prompts: s.getPromptTemplatePaths(),
    skills: s.getSkillPaths(),
    themes: s.getThemePaths(),
    theme: s.getTheme() ?? null,
    transport: s.getTransport(),
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
