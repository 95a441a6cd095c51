/**
 * pi's resource loader for one owner, as the server builds it: everything that becomes the model's
 * context (context files, SYSTEM and APPEND_SYSTEM, skills, prompts, themes) is read by the server
 * beneath the owner's folders and handed to pi as content (owner-resources.ts); pi never opens a path
 * in the workspace or the agent dir for it. A `/skill:name` command is expanded here too, from a fresh
 * read beneath the folder, before pi would read the skill's file by its path (`expandSkill`, called
 * from the session's `input` hook).
 *
 * Extensions (code pi runs inside this process) come from the agent dir only, in local mode: pi's own
 * loader runs for them alone, rooted at the agent dir (its package manager looks there and in its
 * parent folders, none of which a sandbox or a model can write), told `noExtensions` (it discovers
 * none) and given the agent dir's extensions as explicit paths, with no skills, prompts, themes or
 * context files of its own. Settings reach it only as the `extensions` and `packages` entries.
 *
 * pi also installs missing npm and git packages named in settings, and downloads ripgrep and fd into
 * the server user's home when `grep` or `find` first runs. Both are turned off with pi's offline switch
 * (`PI_OFFLINE=1`, read by pi on each use), set for the whole process before any loader runs.
 */
import type {
  DefaultResourceLoader,
  ExtensionFactory,
  ResourceLoader,
  SettingsManager,
  Theme,
} from "@mariozechner/pi-coding-agent";
import { loadPi, type PiSdk } from "../../models/pi-sdk.ts";
import { Beneath } from "../../workspace/beneath.ts";
import type { ChatFolders } from "./chat-folders.ts";
import {
  type OwnerResourceSet,
  RESOURCE_MAX_BYTES,
  readOwnerResources,
  type Shown,
  spellings,
  why,
} from "./owner-resources.ts";

/** pi's offline switch: no npm or git installs, no tool downloads. */
export function keepPiOffline(): void {
  process.env.PI_OFFLINE = "1";
}

/** Paths as API responses show them: relative to the owner's folder, labelled. */
export const LABELLED: Shown = {
  workspace: (relative) => (relative ? `workspace/${relative}` : "workspace"),
  agent: (relative) => (relative ? `pi-agent/${relative}` : "pi-agent"),
};

export class OwnerResourceLoader implements ResourceLoader {
  private set!: OwnerResourceSet;

  constructor(
    private readonly pi: PiSdk,
    private readonly paths: ChatFolders,
    private readonly settings: SettingsManager,
    /** pi's loader, for the agent dir's extensions and the inline extension factories only. */
    private readonly code: DefaultResourceLoader,
    private readonly shown: Shown,
  ) {}

  async reload(): Promise<void> {
    await this.settings.reload();
    await this.code.reload();
    this.set = readOwnerResources(
      this.pi,
      { workspace: this.paths.workspaceDir, agent: this.paths.agentDir },
      {
        skills: this.settings.getSkillPaths(),
        prompts: this.settings.getPromptTemplatePaths(),
        themes: this.settings.getThemePaths(),
      },
      this.shown,
    );
  }

  getExtensions() {
    return this.code.getExtensions();
  }

  getSkills() {
    return { skills: this.set.skills, diagnostics: this.set.diagnostics.skills };
  }

  getPrompts() {
    return { prompts: this.set.prompts, diagnostics: this.set.diagnostics.prompts };
  }

  /**
   * pi's Theme is the terminal UI's colour set, which the server never renders and pi's session never
   * reads; the catalog only names the themes found, so these carry a name and a shown path.
   */
  getThemes() {
    return { themes: this.set.themes as unknown as Theme[], diagnostics: this.set.diagnostics.themes };
  }

  getAgentsFiles() {
    return { agentsFiles: this.set.contextFiles };
  }

  getSystemPrompt() {
    return this.set.systemPrompt;
  }

  getAppendSystemPrompt() {
    return this.set.appendSystemPrompt;
  }

  /** Context and system prompt files left out, and why. */
  contextDiagnostics(): string[] {
    return this.set.diagnostics.context;
  }

  /** Resources an extension names (agent-dir code, local mode): pi loads those paths itself. */
  extendResources(paths: Parameters<ResourceLoader["extendResources"]>[0]): void {
    this.code.extendResources(paths);
  }

  /**
   * `/skill:name args` with the skill's text read now, beneath its folder, in pi's own form; undefined
   * when `text` is no such command. A skill whose file can no longer be read becomes a block saying so:
   * the command never reaches pi, which would read the file by its path.
   */
  expandSkill(text: string): string | undefined {
    const match = /^\/skill:(\S+)(?:\s+([\s\S]*))?$/.exec(text);
    const skill = match ? this.set.skills.find((s) => s.name === match[1]) : undefined;
    const at = skill ? this.set.skillFiles.get(skill.name) : undefined;
    if (!skill || !at) return undefined;
    const folder = at.place === "workspace" ? this.paths.workspaceDir : this.paths.agentDir;
    let body: string;
    try {
      const bytes = new Beneath(folder).readFile(at.relative, RESOURCE_MAX_BYTES, spellings(folder));
      body = bytes ? this.pi.stripFrontmatter(bytes.toString("utf8")).trim() : "The skill's file is gone.";
    } catch (error) {
      body = `The skill's file could not be read (${why(error)}).`;
    }
    const block = `<skill name="${skill.name}" location="${skill.filePath}">\nReferences are relative to ${skill.baseDir}.\n\n${body}\n</skill>`;
    const args = match?.[2]?.trim();
    return args ? `${block}\n\n${args}` : block;
  }
}

/**
 * The owner's resource loader. `shown`: how paths appear in what the loader hands out (the model's own
 * paths for a session, labels for API responses).
 */
export async function loadResources(
  paths: ChatFolders,
  settings: SettingsManager,
  extensionFactories: ExtensionFactory[] = [],
  shown: Shown = LABELLED,
): Promise<OwnerResourceLoader> {
  keepPiOffline();
  const pi = await loadPi();
  const { agentDir } = paths;
  // Code entries only: pi's package manager would walk whatever folders `skills` or `themes` name.
  const code = pi.SettingsManager.inMemory({
    extensions: settings.getExtensionPaths(),
    packages: settings.getPackages(),
  });
  const codeLoader = new pi.DefaultResourceLoader({
    cwd: agentDir,
    agentDir,
    settingsManager: pi.SettingsManager.inMemory({}),
    extensionFactories,
    noExtensions: true,
    additionalExtensionPaths: await agentDirExtensions(pi, agentDir, code),
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
    // Given (empty) so pi looks for no SYSTEM.md or APPEND_SYSTEM.md of its own.
    systemPrompt: "",
    appendSystemPrompt: [],
  });
  const loader = new OwnerResourceLoader(pi, paths, settings, codeLoader, shown);
  await loader.reload();
  return loader;
}

/**
 * The extensions pi would load from the agent dir: its `extensions/` folder and the settings' entries
 * (already confined to the agent dir by pi-settings.ts), resolved by pi's package manager with the agent
 * dir as its project too, so no workspace file is looked at.
 */
async function agentDirExtensions(pi: PiSdk, agentDir: string, settings: SettingsManager): Promise<string[]> {
  const manager = new pi.DefaultPackageManager({ cwd: agentDir, agentDir, settingsManager: settings });
  const resolved = await manager.resolve();
  return resolved.extensions.filter((e) => e.enabled && e.path.startsWith(`${agentDir}/`)).map((e) => e.path);
}

/** Loader diagnostics as plain lines. */
export function resourceDiagnostics(loader: OwnerResourceLoader): string[] {
  return [
    ...loader.getSkills().diagnostics.map((d) => `skill: ${d.message}${d.path ? ` (${d.path})` : ""}`),
    ...loader.getPrompts().diagnostics.map((d) => `prompt: ${d.message}${d.path ? ` (${d.path})` : ""}`),
    ...loader.getThemes().diagnostics.map((d) => `theme: ${d.message}${d.path ? ` (${d.path})` : ""}`),
    ...loader.contextDiagnostics().map((line) => `context file: ${line}`),
    ...loader.getExtensions().errors.map((e) => `extension: ${e.path}: ${e.error}`),
  ];
}
