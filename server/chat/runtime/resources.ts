/**
 * pi's resource loader over an owner's folders: skills, prompts, extensions and themes from the agent
 * dir and the workspace. pi's discovery also walks up from the workspace and into the user's home
 * (`~/.agents`); only files inside the owner's own folders are kept.
 */
import type { DefaultResourceLoader, ExtensionFactory, SettingsManager } from "@mariozechner/pi-coding-agent";
import { loadPi } from "../../models/pi-sdk.ts";
import type { OwnerPaths } from "../paths.ts";

export async function loadResources(
  paths: OwnerPaths,
  settings: SettingsManager,
  extensionFactories: ExtensionFactory[] = [],
): Promise<DefaultResourceLoader> {
  const { DefaultResourceLoader } = await loadPi();
  const { workspaceDir, agentDir } = paths;
  const inside = (path: string) => path.startsWith(`${workspaceDir}/`) || path.startsWith(`${agentDir}/`);
  const loader = new DefaultResourceLoader({
    cwd: workspaceDir,
    agentDir,
    settingsManager: settings,
    extensionFactories,
    skillsOverride: (base) => ({ ...base, skills: base.skills.filter((s) => inside(s.filePath)) }),
    promptsOverride: (base) => ({ ...base, prompts: base.prompts.filter((p) => inside(p.filePath)) }),
    agentsFilesOverride: (base) => ({ agentsFiles: base.agentsFiles.filter((f) => inside(f.path)) }),
  });
  await loader.reload();
  return loader;
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
