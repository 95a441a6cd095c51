/**
 * pi's own file tools (read, write, edit, ls, grep, find) over the owner's workspace, each checking its
 * path again when it starts to run; read, write and edit open files beneath the workspace folder, never
 * by name (workspace-io.ts). The tool_call hook (guard.ts) already refused anything outside the
 * workspace, but pi runs the hooks of a whole batch of parallel tool calls before any of them executes:
 * the check at execution narrows the gap to the moment pi opens the file. (`bash`, the one tool that
 * could change the filesystem in between, runs sequentially: see live-session.ts.)
 */
import type { SettingsManager, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { loadPi } from "../../models/pi-sdk.ts";
import { pathRefusal } from "./guard.ts";
import { workspaceIo } from "./workspace-io.ts";

// biome-ignore lint/suspicious/noExplicitAny: pi's tool definitions differ in their parameter schemas
type AnyTool = ToolDefinition<any, any, any>;

/** Registered under pi's names, so they replace the built-in tools of the same names. */
export async function workspaceFileTools(
  workspaceDir: string,
  settings: SettingsManager,
): Promise<AnyTool[]> {
  const pi = await loadPi();
  const io = workspaceIo(workspaceDir);
  const tools: AnyTool[] = [
    pi.createReadToolDefinition(workspaceDir, {
      autoResizeImages: settings.getImageAutoResize(),
      operations: io.read,
    }),
    pi.createWriteToolDefinition(workspaceDir, { operations: io.write }),
    pi.createEditToolDefinition(workspaceDir, { operations: io.edit }),
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
