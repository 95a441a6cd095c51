/**
 * Limits on what the agent's tools may touch, checked in pi's tool_call hook before a tool runs:
 * file tools stay inside the owner's workspace (an absolute path, `..` or a symlink out of it is
 * refused), and shell commands run only where the server may run code on its host: in local mode (the
 * user's own machine). Protected mode needs the sandbox (DESIGN.md), which chat tools do not have yet,
 * so `bash` is refused there with a clear reason.
 */
import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, resolve, sep } from "node:path";

const PATH_TOOLS = new Set(["read", "write", "edit", "grep", "find", "ls"]);

export interface GuardOptions {
  workspaceDir: string;
  /** False in protected mode: no code runs on the host outside the sandbox. */
  hostCommands: boolean;
}

export function toolRefusal(options: GuardOptions, toolName: string, input: unknown): string | undefined {
  if (toolName === "bash" && !options.hostCommands)
    return "Shell commands are disabled on this server: protected mode runs code only in the sandbox.";
  if (!PATH_TOOLS.has(toolName)) return undefined;
  const path = (input as { path?: unknown } | undefined)?.path;
  if (path === undefined || path === null || path === "") return undefined;
  if (typeof path !== "string" || !insideWorkspace(options.workspaceDir, path))
    return `The path '${String(path)}' is outside your workspace; use a path relative to it.`;
  return undefined;
}

function insideWorkspace(workspaceDir: string, path: string): boolean {
  if (path.startsWith("~") || path.includes("\0")) return false;
  const root = realpathSync(workspaceDir);
  let target = resolve(root, isAbsolute(path) ? path : path.replace(/^@/, ""));
  // Resolve symlinks through the deepest part that exists (a new file's folder may not exist yet).
  let existing = target;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  target = realpathSync(existing) + target.slice(existing.length);
  return target === root || target.startsWith(`${root}${sep}`);
}
