/**
 * pi's resource loader over an owner's folders: skills, prompts, themes and AGENTS files from the agent
 * dir and the workspace; extensions (code pi runs inside this process) from the agent dir only.
 *
 * The workspace is written by the model (its tools, its shell) and by HTTP clients (the Files API), so
 * nothing there may become code the server loads. pi discovers extensions in `<cwd>/.pi/extensions`
 * and in the paths settings name; the loader is therefore told `noExtensions` (it discovers none), and
 * given the agent dir's extensions, found by pi's own package manager rooted at the agent dir, as
 * explicit paths. pi's settings never come from the workspace either (pi-settings.ts).
 *
 * pi also installs missing npm and git packages named in settings, and downloads ripgrep and fd into
 * the server user's home when `grep` or `find` first runs. Both are turned off with pi's offline switch
 * (`PI_OFFLINE=1`, read by pi on each use), set for the whole process before any loader runs.
 *
 * pi's discovery also walks up from the workspace and into the user's home (`~/.agents`); only files
 * inside the owner's own folders are kept.
 */
import type { DefaultResourceLoader, ExtensionFactory, SettingsManager } from "@mariozechner/pi-coding-agent";
import { loadPi } from "../../models/pi-sdk.ts";
import type { OwnerPaths } from "./owner-paths.ts";

/** pi's offline switch: no npm or git installs, no tool downloads. */
export function keepPiOffline(): void {
  process.env.PI_OFFLINE = "1";
}

export async function loadResources(
  paths: OwnerPaths,
  settings: SettingsManager,
  extensionFactories: ExtensionFactory[] = [],
): Promise<DefaultResourceLoader> {
  keepPiOffline();
  const { DefaultResourceLoader } = await loadPi();
  const { workspaceDir, agentDir } = paths;
  const inside = (path: string) => path.startsWith(`${workspaceDir}/`) || path.startsWith(`${agentDir}/`);
  const loader = new DefaultResourceLoader({
    cwd: workspaceDir,
    agentDir,
    settingsManager: settings,
    extensionFactories,
    noExtensions: true,
    additionalExtensionPaths: await agentDirExtensions(agentDir, settings),
    skillsOverride: (base) => ({ ...base, skills: base.skills.filter((s) => inside(s.filePath)) }),
    promptsOverride: (base) => ({ ...base, prompts: base.prompts.filter((p) => inside(p.filePath)) }),
    agentsFilesOverride: (base) => ({ agentsFiles: base.agentsFiles.filter((f) => inside(f.path)) }),
  });
  await loader.reload();
  return loader;
}

/**
 * The extensions pi would load from the agent dir: its `extensions/` folder and the settings' entries
 * (already confined to the agent dir by pi-settings.ts), resolved by pi's package manager with the agent
 * dir as its project too, so no workspace file is looked at.
 */
async function agentDirExtensions(agentDir: string, settings: SettingsManager): Promise<string[]> {
  const { DefaultPackageManager } = await loadPi();
  const manager = new DefaultPackageManager({ cwd: agentDir, agentDir, settingsManager: settings });
  const resolved = await manager.resolve();
  return resolved.extensions.filter((e) => e.enabled && e.path.startsWith(`${agentDir}/`)).map((e) => e.path);
}

/** Loader diagnostics as plain lines. */
export function resourceDiagnostics(loader: DefaultResourceLoader): string[] {
  return [
    ...loader.getSkills().diagnostics.map((d) => `skill: ${d.message}${d.path ? ` (${d.path})` : ""}`),
    ...loader.getPrompts().diagnostics.map((d) => `prompt: ${d.message}${d.path ? ` (${d.path})` : ""}`),
    ...loader.getThemes().diagnostics.map((d) => `theme: ${d.message}${d.path ? ` (${d.path})` : ""}`),
    ...loader.getExtensions().errors.map((e) => `extension: ${e.path}: ${e.error}`),
  ];
}
