/**
 * The resources pi would discover in an owner's folders, read by the server itself beneath each folder
 * (server/workspace/beneath.ts: openat2, a regular file with one name, at most `RESOURCE_MAX_BYTES`, a
 * symlink followed only while it stays in the folder, folders walked without following any) and handed
 * to pi as content, never as a path pi opens:
 *
 *   context files   AGENTS.md (or AGENTS.MD, CLAUDE.md, CLAUDE.MD) in the agent dir and the workspace
 *   system prompt   .pi/SYSTEM.md and .pi/APPEND_SYSTEM.md (workspace), SYSTEM.md and APPEND_SYSTEM.md
 *                   (agent dir): the workspace's first, as pi does
 *   skills          .pi/skills and .agents/skills (workspace), skills/ (agent dir), settings `skills`
 *   prompts         .pi/prompts (workspace), prompts/ (agent dir), settings `prompts`
 *   themes          .pi/themes (workspace), themes/ (agent dir), settings `themes`
 *
 * The workspace belongs to the sandbox (or, in local mode, the model's shell): it can plant links,
 * hard links, named pipes and huge files under every one of those names, and swap folders in a loop
 * while the server reads. Whatever it does, a name either reads the user's own bytes or is left out
 * with a diagnostic. pi's own discovery, which also walks the workspace's parents and the server
 * user's home, is not used; settings entries must name paths inside the agent dir.
 *
 * Paths are shown as `shown` says (what the model or a client may see), never as the server's path.
 */
import { realpathSync } from "node:fs";
import { posix } from "node:path";
import type { PromptTemplate, ResourceDiagnostic, Skill, SourceInfo } from "@mariozechner/pi-coding-agent";
import type { PiSdk } from "../../models/pi-sdk.ts";
import { Beneath } from "../../workspace/beneath.ts";

/** Largest resource file read (a context file, a skill, a prompt, a theme). */
export const RESOURCE_MAX_BYTES = 256 * 1024;
/** Entries looked at per folder walk, and how deep: a planted tree cannot make loading slow. */
const WALK_BUDGET = 2000;
const MAX_DEPTH = 6;
const CONTEXT_NAMES = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];

export type Place = "workspace" | "agent";

/** How a path in one of the owner's folders is shown. */
export type Shown = Record<Place, (relative: string) => string>;

export interface Located {
  place: Place;
  /** Relative to the folder. */
  relative: string;
}

export interface ThemeEntry {
  name: string;
  sourcePath: string;
}

export interface OwnerResourceSet {
  contextFiles: { path: string; content: string }[];
  systemPrompt?: string;
  appendSystemPrompt: string[];
  skills: Skill[];
  prompts: PromptTemplate[];
  themes: ThemeEntry[];
  diagnostics: {
    skills: ResourceDiagnostic[];
    prompts: ResourceDiagnostic[];
    themes: ResourceDiagnostic[];
    /** Context and system prompt files left out, and why. */
    context: string[];
  };
  /** Where each loaded skill's file is, by skill name (what a `/skill:name` expansion reads). */
  skillFiles: Map<string, Located>;
}

export interface ResourceSettings {
  skills: string[];
  prompts: string[];
  themes: string[];
}

type Kind = keyof ResourceSettings;

/** Reads every resource of an owner's two folders (see the module comment). */
export function readOwnerResources(
  pi: Pick<PiSdk, "parseFrontmatter">,
  folders: Record<Place, string>,
  settings: ResourceSettings,
  shown: Shown,
): OwnerResourceSet {
  const reader = new Reader(pi, folders, shown);
  const found = reader.discover(settings);
  const { skills, skillFiles } = reader.skills(found.skills);
  const prompts = reader.prompts(found.prompts);
  const themes = reader.themes(found.themes);
  const contextFiles = [reader.contextFile("agent"), reader.contextFile("workspace")].filter(
    (f) => f !== undefined,
  );
  const systemPrompt = reader.promptFile("SYSTEM.md");
  const append = reader.promptFile("APPEND_SYSTEM.md");
  return {
    contextFiles,
    ...(systemPrompt !== undefined ? { systemPrompt } : {}),
    appendSystemPrompt: append !== undefined ? [append] : [],
    skills,
    prompts,
    themes,
    diagnostics: reader.diagnostics,
    skillFiles,
  };
}

/** One load's reads, beneath the owner's two folders, and what was left out. */
class Reader {
  readonly diagnostics: OwnerResourceSet["diagnostics"] = {
    skills: [],
    prompts: [],
    themes: [],
    context: [],
  };
  private readonly fs: Record<Place, Beneath>;
  private readonly budget = { left: WALK_BUDGET };

  private readonly aliases: Record<Place, string[]>;

  constructor(
    private readonly pi: Pick<PiSdk, "parseFrontmatter">,
    folders: Record<Place, string>,
    private readonly shown: Shown,
  ) {
    this.fs = { workspace: new Beneath(folders.workspace), agent: new Beneath(folders.agent) };
    this.aliases = { workspace: spellings(folders.workspace), agent: spellings(folders.agent) };
  }

  private show(at: Located): string {
    return this.shown[at.place](at.relative);
  }

  private warn(kind: Kind, at: Located, message: string) {
    this.diagnostics[kind].push({ type: "warning", message, path: this.show(at) });
  }

  /**
   * A file's text, or undefined when it is missing or refused (`refused` says why). A symlink is
   * followed only while it stays in the folder (`AGENTS.md` linked to `docs/agents.md`).
   */
  private text(at: Located, refused?: (message: string) => void): string | undefined {
    try {
      const bytes = this.fs[at.place].readFile(at.relative, RESOURCE_MAX_BYTES, this.aliases[at.place]);
      return bytes?.toString("utf8");
    } catch (error) {
      refused?.(why(error));
      return undefined;
    }
  }

  private context(at: Located): string | undefined {
    return this.text(at, (reason) => this.diagnostics.context.push(`${this.show(at)}: ${reason}`));
  }

  /** The folder's first context file that reads (pi's order), shown at its path. */
  contextFile(place: Place) {
    for (const relative of CONTEXT_NAMES) {
      const content = this.context({ place, relative });
      if (content !== undefined) return { path: this.show({ place, relative }), content };
    }
    return undefined;
  }

  /** SYSTEM.md or APPEND_SYSTEM.md: the workspace's `.pi/` one, else the agent dir's. */
  promptFile(name: string): string | undefined {
    return (
      this.context({ place: "workspace", relative: `.pi/${name}` }) ??
      this.context({ place: "agent", relative: name })
    );
  }

  /** The candidate files: the workspace's first (pi lets project resources win), then settings', then the agent dir's. */
  discover(settings: ResourceSettings): Record<Kind, Located[]> {
    const found: Record<Kind, Located[]> = {
      skills: [
        ...this.skillsIn("workspace", ".pi/skills", "pi"),
        ...this.skillsIn("workspace", ".agents/skills", "agents"),
      ],
      prompts: this.filesIn("workspace", ".pi/prompts", ".md"),
      themes: this.filesIn("workspace", ".pi/themes", ".json"),
    };
    for (const kind of ["skills", "prompts", "themes"] as const)
      for (const [i, entry] of settings[kind].entries())
        found[kind].push(...this.settingsEntry(kind, i, entry));
    found.skills.push(...this.skillsIn("agent", "skills", "pi"));
    found.prompts.push(...this.filesIn("agent", "prompts", ".md"));
    found.themes.push(...this.filesIn("agent", "themes", ".json"));
    return { skills: unique(found.skills), prompts: unique(found.prompts), themes: unique(found.themes) };
  }

  /** A settings entry's files: a file or a folder inside the agent dir, never anything else. */
  private settingsEntry(kind: Kind, index: number, entry: string): Located[] {
    const relative = insideAgentDir(entry);
    if (relative === undefined) {
      this.diagnostics[kind].push({
        type: "warning",
        message: `settings ${kind} entry ${index}: only paths inside your pi agent dir are loaded (filters and other paths are not)`,
      });
      return [];
    }
    const at: Located = { place: "agent", relative };
    let stat: ReturnType<Beneath["stat"]>;
    try {
      stat = this.fs.agent.stat(relative);
    } catch (error) {
      this.warn(kind, at, why(error));
      return [];
    }
    if (!stat) this.warn(kind, at, "not found");
    else if (stat.isFile()) return [at];
    else if (!stat.isDirectory()) this.warn(kind, at, "not a file or a folder");
    else if (kind === "skills") return this.skillsIn("agent", relative, "pi");
    else return this.filesIn("agent", relative, kind === "prompts" ? ".md" : ".json");
    return [];
  }

  /** pi's skill discovery: a folder with SKILL.md is a skill; else (pi format) its top `.md` files, and below. */
  private skillsIn(place: Place, dir: string, mode: "pi" | "agents", depth = 0): Located[] {
    const here = entries(this.fs[place], dir, this.budget);
    if (here.some((e) => e.name === "SKILL.md" && e.file))
      return [{ place, relative: posix.join(dir, "SKILL.md") }];
    const out: Located[] = [];
    for (const entry of here) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const relative = posix.join(dir, entry.name);
      if (mode === "pi" && depth === 0 && entry.file && entry.name.endsWith(".md"))
        out.push({ place, relative });
      if (entry.dir && depth < MAX_DEPTH) out.push(...this.skillsIn(place, relative, mode, depth + 1));
    }
    return out;
  }

  private filesIn(place: Place, dir: string, suffix: string): Located[] {
    return entries(this.fs[place], dir, this.budget)
      .filter((e) => e.file && !e.name.startsWith(".") && e.name.endsWith(suffix))
      .map((e) => ({ place, relative: posix.join(dir, e.name) }));
  }

  /** Skills as pi's loader makes them (frontmatter name and description), at their shown paths. */
  skills(found: Located[]) {
    const skills: Skill[] = [];
    const skillFiles = new Map<string, Located>();
    for (const at of found) {
      const parsed = this.parsed("skills", at);
      if (!parsed) continue;
      const description = typeof parsed.data.description === "string" ? parsed.data.description.trim() : "";
      const parent = posix.basename(posix.dirname(at.relative));
      const name = typeof parsed.data.name === "string" && parsed.data.name ? parsed.data.name : parent;
      if (!description) {
        this.warn("skills", at, "description is required");
        continue;
      }
      if (name !== parent)
        this.warn("skills", at, `name "${name}" does not match parent directory "${parent}"`);
      if (skillFiles.has(name)) {
        this.diagnostics.skills.push({
          type: "collision",
          message: `name "${name}" collision`,
          path: this.show(at),
        });
        continue;
      }
      const filePath = this.show(at);
      const baseDir = this.shown[at.place](posix.dirname(at.relative));
      skillFiles.set(name, at);
      skills.push({
        name,
        description: description.slice(0, 1024),
        filePath,
        baseDir,
        sourceInfo: sourceInfo(filePath, at.place, baseDir),
        disableModelInvocation: parsed.data["disable-model-invocation"] === true,
      });
    }
    return { skills, skillFiles };
  }

  /** Prompt templates as pi's loader makes them: name from the file, description, hint, body. */
  prompts(found: Located[]): PromptTemplate[] {
    const prompts: PromptTemplate[] = [];
    for (const at of found) {
      const parsed = this.parsed("prompts", at);
      if (!parsed) continue;
      const name = posix.basename(at.relative).replace(/\.md$/, "");
      if (prompts.some((p) => p.name === name)) {
        this.diagnostics.prompts.push({
          type: "collision",
          message: `name "/${name}" collision`,
          path: this.show(at),
        });
        continue;
      }
      const firstLine = parsed.body.split("\n").find((line) => line.trim()) ?? "";
      const described = typeof parsed.data.description === "string" ? parsed.data.description : "";
      const hint = parsed.data["argument-hint"];
      const filePath = this.show(at);
      prompts.push({
        name,
        description: described || (firstLine.length > 60 ? `${firstLine.slice(0, 60)}...` : firstLine),
        ...(typeof hint === "string" && hint ? { argumentHint: hint } : {}),
        content: parsed.body,
        sourceInfo: sourceInfo(filePath, at.place),
        filePath,
      });
    }
    return prompts;
  }

  /** Themes by their JSON `name` (the server never renders them). */
  themes(found: Located[]): ThemeEntry[] {
    const themes: ThemeEntry[] = [];
    for (const at of found) {
      const raw = this.text(at, (reason) => this.warn("themes", at, reason));
      if (raw === undefined) continue;
      let name: unknown;
      try {
        name = (JSON.parse(raw) as { name?: unknown }).name;
      } catch {
        this.warn("themes", at, "not valid JSON");
        continue;
      }
      if (typeof name !== "string" || !name) this.warn("themes", at, "a theme needs a name");
      else if (themes.some((th) => th.name === name)) this.warn("themes", at, `name "${name}" collision`);
      else themes.push({ name, sourcePath: this.show(at) });
    }
    return themes;
  }

  private parsed(kind: Kind, at: Located) {
    const raw = this.text(at, (reason) => this.warn(kind, at, reason));
    if (raw === undefined) return undefined;
    try {
      const { frontmatter: data, body } = this.pi.parseFrontmatter<Record<string, unknown>>(raw);
      return { data, body };
    } catch {
      this.warn(kind, at, "its frontmatter is not valid YAML");
      return undefined;
    }
  }
}

/** A settings entry as a path relative to the agent dir, when it is a plain path that stays inside. */
export function insideAgentDir(entry: string): string | undefined {
  const trimmed = entry.trim();
  if (!trimmed || trimmed.includes("\0") || /^[!+~-]/.test(trimmed) || /[*?]/.test(trimmed)) return undefined;
  const relative = posix.normalize(trimmed);
  if (posix.isAbsolute(relative) || relative === ".." || relative.startsWith("../")) return undefined;
  return relative === "." ? "" : relative.replace(/\/$/, "");
}

/** Why a read was refused, in words (never the file's content). */
export function why(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === "ELOOP" || code === "EXDEV") return "a symbolic link on the way: not read";
  if (code === "EMLINK") return "has other names (hard links): not read";
  if (code === "EFBIG") return `larger than ${RESOURCE_MAX_BYTES} bytes: not read`;
  if (code === "ENOTREG") return "not a regular file: not read";
  if (code === "EISDIR") return "a folder: not read";
  return "could not be read";
}

/** A folder's entries (their lstat: symlinks are neither files nor folders), within the budget. */
function entries(fs: Beneath, dir: string, budget: { left: number }) {
  const found: { name: string; file: boolean; dir: boolean }[] = [];
  try {
    fs.walk(dir, (_relative, name, stat) => {
      if (budget.left <= 0) return "stop";
      budget.left--;
      found.push({ name, file: stat.isFile(), dir: stat.isDirectory() });
      return false;
    });
  } catch {
    return []; // missing, or not a folder reached without a link
  }
  return found;
}

/**
 * The absolute spellings of a folder the server made (so resolving it by name is safe), for links
 * inside it written with absolute paths.
 */
export function spellings(folder: string): string[] {
  try {
    return [...new Set([folder, realpathSync(folder)])];
  } catch {
    return [folder];
  }
}

function sourceInfo(path: string, place: Place, baseDir?: string): SourceInfo {
  return {
    path,
    source: "local",
    scope: place === "workspace" ? "project" : "user",
    origin: "top-level",
    baseDir,
  };
}

function unique(found: Located[]): Located[] {
  const seen = new Set<string>();
  return found.filter((at) => {
    const key = `${at.place}:${at.relative}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
