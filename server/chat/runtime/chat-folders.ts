/**
 * The chat family's view of an owner's folders (workspace/owner-folders.ts names them for every family):
 *   sessionsDir    sessions/<folder>/*.jsonl   pi session files (the transcripts)
 *   workspaceDir   workspaces/<folder>/        the agent's working directory (the project dir pi sees)
 *   agentDir       pi-agent/<folder>/          pi's agent dir: settings.json, models.json, skills, prompts, extensions
 * the one check every request path goes through: a session file named by a client must be a `.jsonl`
 * file directly inside the caller's own sessions folder; and how a path appears in a response: never
 * the server's absolute path (it tells a client where the data dir is, and whose folder it reads), only
 * a path relative to the owner's folder it lies in.
 */
import { mkdirSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { ownerFolders } from "../../workspace/owner-folders.ts";

export interface ChatFolders {
  sessionsDir: string;
  workspaceDir: string;
  agentDir: string;
}

export function chatFolders(dataDir: string, owner: string): ChatFolders {
  const folders = ownerFolders(dataDir, owner);
  return { sessionsDir: folders.sessions, workspaceDir: folders.workspace, agentDir: folders.piAgent };
}

/** Creates the owner's folders where missing (private to the server's user); returns the paths. */
export function ensureChatFolders(paths: ChatFolders): ChatFolders {
  for (const dir of [paths.sessionsDir, paths.workspaceDir, paths.agentDir])
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  return paths;
}

/**
 * A session file as responses name it: its file name, relative to the owner's sessions folder. That is
 * also what a client sends back (`confineSessionFile` takes a bare name relative to that folder).
 */
export function publicSessionFile(sessionFile: string | undefined): string | undefined {
  return sessionFile ? basename(sessionFile) : undefined;
}

/** Labels of the owner's folders in responses: `workspace/AGENTS.md`, `pi-agent/extensions/x.ts`. */
function labelled(paths: ChatFolders): [string, string][] {
  const roots: [string, string][] = [
    [paths.sessionsDir, "sessions"],
    [paths.workspaceDir, "workspace"],
    [paths.agentDir, "pi-agent"],
  ];
  // The real path too: pi reports some paths with symlinks resolved (a temp dir under /tmp, say).
  for (const [dir, label] of [...roots]) {
    const real = realPath(dir);
    if (real !== dir) roots.push([real, label]);
  }
  return roots;
}

/**
 * A path as responses show it: relative to the owner's folder it is in (`workspace/…`, `pi-agent/…`,
 * `sessions/…`), or its bare file name when it lies in none of them.
 */
export function publicPath(paths: ChatFolders, path: string): string {
  for (const [dir, label] of labelled(paths)) {
    if (path === dir) return label;
    if (path.startsWith(`${dir}/`)) return `${label}/${path.slice(dir.length + 1)}`;
  }
  return basename(path);
}

/** A message with every occurrence of the owner's folders (and the data dir) replaced by its label. */
export function scrubPaths(paths: ChatFolders, dataDir: string, text: string): string {
  let out = text;
  for (const [dir, label] of labelled(paths)) out = out.replaceAll(dir, label);
  for (const dir of new Set([dataDir, realPath(dataDir)])) out = out.replaceAll(dir, "<data dir>");
  return out;
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The absolute path of a client-named session file, or undefined when it points anywhere but a
 * `.jsonl` file directly inside `sessionsDir` (traversal, another owner's folder, other files).
 * A bare file name is taken relative to the sessions folder.
 */
export function confineSessionFile(sessionsDir: string, requested: string): string | undefined {
  if (requested.includes("\0")) return undefined;
  const root = resolve(sessionsDir);
  const full = isAbsolute(requested) ? resolve(requested) : resolve(root, requested);
  if (dirname(full) !== root) return undefined;
  if (!/^[A-Za-z0-9._-]+\.jsonl$/.test(basename(full))) return undefined;
  return full;
}
