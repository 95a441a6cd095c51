/**
 * pi's settings for one owner, kept in one file: `pi-agent/<owner>/settings.json`.
 *
 * pi's SettingsManager merges two scopes: global (the agent dir) and project (`<cwd>/.pi/settings.json`,
 * here the workspace). The workspace is writable by the agent's shell and by the Files API, and settings
 * name code that pi loads (`extensions`) or installs from npm or git and loads (`packages`). So pi's
 * project scope is always empty here, and `POST /api/chat/settings` writes the agent dir's file.
 * Whoever wrote that file, pi sees only the code entries that stay inside the owner's agent dir, and
 * none in protected mode (`codeEntryRefusal`).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { SettingsManager } from "@mariozechner/pi-coding-agent";
import { loadPi } from "../../models/pi-sdk.ts";
import { physicalPath } from "./tool-paths.ts";

/** Settings keys whose entries name code pi runs. */
export const CODE_KEYS = ["extensions", "packages"] as const;
export type CodeKey = (typeof CODE_KEYS)[number];

export interface CodePolicy {
  agentDir: string;
  /** False in protected mode: no settings entry may name code. */
  allowCode: boolean;
}

export function settingsFile(agentDir: string): string {
  return join(agentDir, "settings.json");
}

/** The owner's pi SettingsManager: the agent dir's file for pi's global scope, nothing for its project scope. */
export async function ownerSettings(policy: CodePolicy): Promise<SettingsManager> {
  const { SettingsManager } = await loadPi();
  const file = settingsFile(policy.agentDir);
  return SettingsManager.fromStorage({
    withLock(scope, update) {
      if (scope === "project") {
        update(undefined); // pi's project settings live in the workspace: never read, never written
        return;
      }
      const current = existsSync(file) ? readFileSync(file, "utf8") : undefined;
      const next = update(current === undefined ? undefined : withoutRefusedCode(current, policy));
      if (next === undefined) return;
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, next);
    },
  });
}

/** The owner's default model as settings name it (`provider/model`), when they name both parts. */
export function settingsModelId(settings: SettingsManager | undefined): string | undefined {
  const provider = settings?.getDefaultProvider();
  const model = settings?.getDefaultModel();
  return provider && model ? `${provider}/${model}` : undefined;
}

/**
 * Why a settings entry of `extensions` or `packages` may not name code, or undefined when pi may load
 * it: a local path that stays (symlinks followed) inside the agent dir. Filter entries of `extensions`
 * (`!x`, `+x`, `-x`, globs) only enable or disable files found through plain entries, so they pass.
 */
export function codeEntryRefusal(key: CodeKey, entry: unknown, policy: CodePolicy): string | undefined {
  if (!policy.allowCode) return "this server does not load extensions or packages named through settings";
  const source = typeof entry === "object" && entry !== null ? (entry as { source?: unknown }).source : entry;
  if (typeof source !== "string") return "not a path";
  const trimmed = source.trim();
  if (key === "extensions" && /^[!+-]|[*?]/.test(trimmed)) return undefined;
  if (/^(npm|git|github|http|https|ssh):/.test(trimmed))
    return "packages are never installed from npm or git here; name a folder inside your pi agent dir";
  const target = physicalPath(piSettingsPath(trimmed, policy.agentDir));
  const root = physicalPath(resolve(policy.agentDir));
  if (!target || !root || (target !== root && !target.startsWith(`${root}/`)))
    return "must be a path inside your pi agent dir";
  return undefined;
}

/** How pi's package manager resolves a settings entry (`resolvePathFromBase`): `~` and `~x` are home. */
function piSettingsPath(entry: string, baseDir: string): string {
  if (entry === "~") return homedir();
  if (entry.startsWith("~/")) return join(homedir(), entry.slice(2));
  if (entry.startsWith("~")) return join(homedir(), entry.slice(1));
  return resolve(baseDir, entry);
}

/** The settings file's text with every refused code entry left out (unchanged when there is none). */
function withoutRefusedCode(text: string, policy: CodePolicy): string {
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch {
    return text; // pi reports the parse error and uses no settings from the file
  }
  if (typeof settings !== "object" || settings === null || Array.isArray(settings)) return text;
  const record = settings as Record<string, unknown>;
  let changed = false;
  for (const key of CODE_KEYS) {
    const entries = record[key];
    if (entries === undefined) continue;
    const kept = Array.isArray(entries) ? entries.filter((e) => !codeEntryRefusal(key, e, policy)) : [];
    if (!Array.isArray(entries) || kept.length !== entries.length) {
      record[key] = kept;
      changed = true;
    }
  }
  return changed ? JSON.stringify(record, null, 2) : text;
}
