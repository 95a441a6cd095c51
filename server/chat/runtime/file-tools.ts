/**
 * pi's own file tools (read, write, edit, ls, grep, find) over the owner's workspace, each checking its
 * path again when it starts to run. The tool_call hook (guard.ts) already refused anything outside the
 * workspace, but pi runs the hooks of a whole batch of parallel tool calls before any of them executes:
 * the check at execution narrows the gap to the moment pi opens the file. (`bash`, the one tool that
 * could change the filesystem in between, runs sequentially: see live-session.ts.)
 */
import type { SettingsManager, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { loadPi } from "../../models/pi-sdk.ts";
import { pathRefusal } from "./guard.ts";

// biome-ignore lint/suspicious/noExplicitAny: pi's tool definitions differ in their parameter schemas
type AnyTool = ToolDefinition<any, any, any>;

/** Registered under pi's names, so they replace the built-in tools of the same names. */
export async function workspaceFileTools(
  workspaceDir: string,
  settings: SettingsManager,
): Promise<AnyTool[]> {
  const pi = await loadPi();
  const tools: AnyTool[] = [
    pi.createReadToolDefinition(workspaceDir, { autoResizeImages: settings.getImageAutoResize() }),
    pi.createWriteToolDefinition(workspaceDir),
    pi.createEditToolDefinition(workspaceDir),
    pi.createLsToolDefinition(workspaceDir),
    pi.createGrepToolDefinition(workspaceDir),
    pi.createFindToolDefinition(workspaceDir),
  ];
  return tools.map((tool) => checkedAtExecution(tool, workspaceDir));
}

export function checkedAtExecution(tool: AnyTool, workspaceDir: string): AnyTool {
  return {
    ...tool,
    execute(toolCallId, params, signal, onUpdate, ctx) {
      const reason = pathRefusal(workspaceDir, tool.name, params);
      if (reason) return Promise.reject(new Error(reason));
      return tool.execute(toolCallId, params, signal, onUpdate, ctx);
    },
  };
}
