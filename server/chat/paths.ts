/**
 * Where the chat family keeps things in the data dir, per owner:
 *   sessions/<owner>/*.jsonl      pi session files (the transcripts)
 *   workspaces/<owner>/           the agent's working directory (the project dir pi sees)
 *   pi-agent/<owner>/             pi's agent dir: settings.json, models.json, skills, prompts, extensions
 * and the one check every request path goes through: a session file named by a client must be a
 * `.jsonl` file directly inside the caller's own sessions folder.
 */
import { mkdirSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";

export interface OwnerPaths {
  sessionsDir: string;
  workspaceDir: string;
  agentDir: string;
}

/** Owner ids are used as folder names: anything outside a safe alphabet is hex-encoded. */
function folderName(owner: string): string {
  return /^[A-Za-z0-9_-]{1,64}$/.test(owner) ? owner : `x${Buffer.from(owner).toString("hex").slice(0, 120)}`;
}

export function ownerPaths(dataDir: string, owner: string): OwnerPaths {
  const name = folderName(owner);
  return {
    sessionsDir: join(dataDir, "sessions", name),
    workspaceDir: join(dataDir, "workspaces", name),
    agentDir: join(dataDir, "pi-agent", name),
  };
}

export function ensureOwnerDirs(paths: OwnerPaths): void {
  for (const dir of [paths.sessionsDir, paths.workspaceDir, paths.agentDir])
    mkdirSync(dir, { recursive: true, mode: 0o700 });
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
