/**
 * Limits on what the agent's tools may touch, checked in pi's tool_call hook before a tool runs and
 * again when it starts (file-tools.ts):
 * - file tools reach only the owner's workspace: the check is on the file pi will open (tool-paths.ts:
 *   pi's own `@`/`~`/Unicode-space resolution, then every symlink on disk), so `@~/x`, `~user`, absolute
 *   paths, `..` and symlinks out are refused;
 * - nothing the agent writes becomes code the server loads: `write` and `edit` refuse the workspace's
 *   `.pi/` folder, where pi looks for extensions and settings (the resource loader does not read it for
 *   code either: see resources.ts);
 * - shell commands run only where the server may run code on its host: in local mode (the user's own
 *   machine). Protected mode runs the tools in the user's sandbox instead (sandbox-tools.ts, with its
 *   own path check), and without one refuses `bash` here.
 */
import { placeIn, toolTarget } from "./tool-paths.ts";

export interface GuardOptions {
  workspaceDir: string;
  /** False in protected mode: no code runs on the host outside the sandbox. */
  hostCommands: boolean;
}

export function toolRefusal(options: GuardOptions, toolName: string, input: unknown): string | undefined {
  if (toolName === "bash" && !options.hostCommands)
    return "Shell commands are disabled on this server: protected mode runs code only in the sandbox.";
  return pathRefusal(options.workspaceDir, toolName, input);
}

/** Why a file tool call may not run, or undefined when it stays inside the workspace. */
export function pathRefusal(workspaceDir: string, toolName: string, input: unknown): string | undefined {
  const target = toolTarget(toolName, input, workspaceDir);
  if (!target) return undefined;
  const place = target.physical && !target.home ? placeIn(workspaceDir, target.physical) : "outside";
  if (place === "outside")
    return `The path '${target.requested}' is outside your workspace; use a path relative to it.`;
  if (place === "pi-config" && target.writes)
    return `The path '${target.requested}' is in .pi/, the workspace's pi configuration: the agent's tools do not write there.`;
  return undefined;
}
