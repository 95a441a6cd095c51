/**
 * The resources pi would discover in an owner's folders, read by the server itself beneath each folder
 * (server/workspace/beneath.ts: openat2, no symlink anywhere, a regular file with one name, at most
 * `RESOURCE_MAX_BYTES`) and handed to pi as content, never as a path pi opens:
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
  const fs: Record<Place, Beneath> = {
    workspace: new Beneath(folders.workspace),
    agent: new Beneath(folders.agent),
  };
  const diagnostics: OwnerResourceSet["diagnostics"] = { skills: [], prompts: [], themes: [], context: [] };
  const warn = (kind: Kind, at: Located, message: string) =>
    diagnostics[kind].push({ type: "warning", message, path: shown[at.place](at.relative) });

  /** A file's text, or undefined (with a diagnostic) when it is missing or refused. */
  const text = (at: Located, refused?: (message: string) => void): string | undefined => {
    try {
      return fs[at.place].readFile(at.relative, RESOURCE_MAX_BYTES)?.toString("utf8");
    } catch (error) {
      refused?.(why(error));
      return undefined;
    }
  };
  const context = (at: Located) =>
    text(at, (reason) => diagnostics.context.push(`${shown[at.place](at.relative)}: ${reason}`));
  const contextFile = (place: Place) => {
    for (const name of CONTEXT_NAMES) {
      const content = context({ place, relative: name });
      if (content !== undefined) return { path: shown[place](name), content };
    }
    return undefined;
  };
  const contextFiles = [contextFile("agent"), contextFile("workspace")].filter((f) => f !== undefined);
  const promptFile = (name: string) =>
    context({ place: "workspace", relative: `.pi/${name}` }) ?? context({ place: "agent", relative: name });

  const found = { skills: [] as Located[], prompts: [] as Located[], themes: [] as Located[] };
  const walkBudget = { left: WALK_BUDGET };
  const list = (place: Place, dir: string) => entries(fs[place], dir, walkBudget);
  const skillsIn = (place: Place, dir: string, mode: "pi" | "agents", depth = 0): Located[] => {
    const here = list(place, dir);
    const skill = here.find((e) => e.name === "SKILL.md" && e.file);
    if (skill) return [{ place, relative: posix.join(dir, "SKILL.md") }];
    const out: Located[] = [];
    for (const entry of here) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const relative = posix.join(dir, entry.name);
      if (mode === "pi" && depth === 0 && entry.file && entry.name.endsWith(".md"))
        out.push({ place, relative });
      if (entry.dir && depth < MAX_DEPTH) out.push(...skillsIn(place, relative, mode, depth + 1));
    }
    return out;
  };
  const filesIn = (place: Place, dir: string, suffix: string): Located[] =>
    list(place, dir)
      .filter((e) => e.file && !e.name.startsWith(".") && e.name.endsWith(suffix))
      .map((e) => ({ place, relative: posix.join(dir, e.name) }));

  // The workspace's first (pi lets project resources win), then the settings' entries, then the agent dir's.
  found.skills.push(
    ...skillsIn("workspace", ".pi/skills", "pi"),
    ...skillsIn("workspace", ".agents/skills", "agents"),
  );
  found.prompts.push(...filesIn("workspace", ".pi/prompts", ".md"));
  found.themes.push(...filesIn("workspace", ".pi/themes", ".json"));
  for (const kind of ["skills", "prompts", "themes"] as const) {
    for (const [i, entry] of settings[kind].entries()) {
      const relative = insideAgentDir(entry);
      if (relative === undefined) {
        diagnostics[kind].push({
          type: "warning",
          message: `settings ${kind} entry ${i}: only paths inside your pi agent dir are loaded (filters and other paths are not)`,
        });
        continue;
      }
      const at: Located = { place: "agent", relative };
      let stat: ReturnType<Beneath["stat"]>;
      try {
        stat = fs.agent.stat(relative);
      } catch (error) {
        warn(kind, at, why(error));
        continue;
      }
      if (!stat) warn(kind, at, "not found");
      else if (stat.isFile()) found[kind].push(at);
      else if (!stat.isDirectory()) warn(kind, at, "not a file or a folder");
      else if (kind === "skills") found.skills.push(...skillsIn("agent", relative, "pi"));
      else found[kind].push(...filesIn("agent", relative, kind === "prompts" ? ".md" : ".json"));
    }
  }
  found.skills.push(...skillsIn("agent", "skills", "pi"));
  found.prompts.push(...filesIn("agent", "prompts", ".md"));
  found.themes.push(...filesIn("agent", "themes", ".json"));

  const skills: Skill[] = [];
  const skillFiles = new Map<string, Located>();
  for (const at of unique(found.skills)) {
    const raw = text(at, (reason) => warn("skills", at, reason));
    if (raw === undefined) continue;
    const parsed = frontmatter(pi, raw, (reason) => warn("skills", at, reason));
    if (!parsed) continue;
    const description = typeof parsed.data.description === "string" ? parsed.data.description.trim() : "";
    const parent = posix.basename(posix.dirname(at.relative));
    const name = typeof parsed.data.name === "string" && parsed.data.name ? parsed.data.name : parent;
    if (!description) {
      warn("skills", at, "description is required");
      continue;
    }
    if (name !== parent) warn("skills", at, `name "${name}" does not match parent directory "${parent}"`);
    if (skillFiles.has(name)) {
      diagnostics.skills.push({
        type: "collision",
        message: `name "${name}" collision`,
        path: shown[at.place](at.relative),
      });
      continue;
    }
    const filePath = shown[at.place](at.relative);
    const baseDir = shown[at.place](posix.dirname(at.relative));
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

  const prompts: PromptTemplate[] = [];
  for (const at of unique(found.prompts)) {
    const raw = text(at, (reason) => warn("prompts", at, reason));
    const parsed =
      raw === undefined ? undefined : frontmatter(pi, raw, (reason) => warn("prompts", at, reason));
    if (!parsed) continue;
    const name = posix.basename(at.relative).replace(/\.md$/, "");
    if (prompts.some((p) => p.name === name)) {
      diagnostics.prompts.push({
        type: "collision",
        message: `name "/${name}" collision`,
        path: shown[at.place](at.relative),
      });
      continue;
    }
    const firstLine = parsed.body.split("\n").find((line) => line.trim()) ?? "";
    const description =
      typeof parsed.data.description === "string" && parsed.data.description
        ? parsed.data.description
        : firstLine.length > 60
          ? `${firstLine.slice(0, 60)}...`
          : firstLine;
    const hint = parsed.data["argument-hint"];
    const filePath = shown[at.place](at.relative);
    prompts.push({
      name,
      description,
      ...(typeof hint === "string" && hint ? { argumentHint: hint } : {}),
      content: parsed.body,
      sourceInfo: sourceInfo(filePath, at.place),
      filePath,
    });
  }

  const themes: ThemeEntry[] = [];
  for (const at of unique(found.themes)) {
    const raw = text(at, (reason) => warn("themes", at, reason));
    if (raw === undefined) continue;
    let name: unknown;
    try {
      name = (JSON.parse(raw) as { name?: unknown }).name;
    } catch {
      warn("themes", at, "not valid JSON");
      continue;
    }
    if (typeof name !== "string" || !name) warn("themes", at, "a theme needs a name");
    else if (themes.some((th) => th.name === name)) warn("themes", at, `name "${name}" collision`);
    else themes.push({ name, sourcePath: shown[at.place](at.relative) });
  }

  const systemPrompt = promptFile("SYSTEM.md");
  const append = promptFile("APPEND_SYSTEM.md");
  return {
    contextFiles,
    ...(systemPrompt !== undefined ? { systemPrompt } : {}),
    appendSystemPrompt: append !== undefined ? [append] : [],
    skills,
    prompts,
    themes,
    diagnostics,
    skillFiles,
  };
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
  let found: ReturnType<Beneath["entries"]>;
  try {
    found = fs.entries(dir);
  } catch {
    return []; // missing, or not a folder reached without a link
  }
  const kept = found.slice(0, Math.max(0, budget.left));
  budget.left -= kept.length;
  return kept.map((e) => ({ name: e.name, file: e.stat.isFile(), dir: e.stat.isDirectory() }));
}

function frontmatter(pi: Pick<PiSdk, "parseFrontmatter">, raw: string, refused: (message: string) => void) {
  try {
    const { frontmatter: data, body } = pi.parseFrontmatter<Record<string, unknown>>(raw);
    return { data, body };
  } catch {
    refused("its frontmatter is not valid YAML");
    return undefined;
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
