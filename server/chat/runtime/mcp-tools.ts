/**
 * The MCP servers' tools as pi custom tools of a chat session (docs/mcp-tools.md): each named
 * `<server>__<tool>`, described and typed as its server says (capped by server/mcp-client/), called
 * through the shared MCP client (an HTTP server through the outbound rule, a stdio server in the owner's
 * sandbox). A server with approval "ask" has the user confirm each call through the questionnaire path
 * (the same pending question and `POST /api/chat/question` answer); a refusal is the tool's error. A
 * server that cannot be reached leaves a diagnostic, not a failed session.
 */
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { McpClients } from "../../mcp-client/clients.ts";
import type { Question, QuestionnaireAnswer } from "./questionnaire.ts";

/** Provider APIs take tool names of at most 64 of these characters. */
const NAME_CHARS = /[^A-Za-z0-9_-]/g;
export const MCP_TOOL_SEPARATOR = "__";

export type Ask = (question: Question, signal?: AbortSignal) => Promise<QuestionnaireAnswer>;

export async function chatMcpTools(
  mcp: McpClients,
  owner: string,
  ask: Ask,
): Promise<{ tools: ToolDefinition[]; diagnostics: string[] }> {
  const tools: ToolDefinition[] = [];
  const diagnostics: string[] = [];
  const taken = new Set<string>();
  for (const server of (await mcp.configs(owner)).filter((s) => s.enabled)) {
    let listed: Awaited<ReturnType<McpClients["tools"]>>;
    try {
      listed = await mcp.tools(owner, server.name);
    } catch (error) {
      diagnostics.push(`MCP server '${server.name}' is not available: ${(error as Error).message}`);
      continue;
    }
    for (const tool of listed) {
      const name = `${server.name}${MCP_TOOL_SEPARATOR}${tool.name.replace(NAME_CHARS, "_")}`.slice(0, 64);
      if (taken.has(name)) continue;
      taken.add(name);
      tools.push({
        name,
        label: `${server.name}: ${tool.name}`,
        description: `[MCP server ${server.name}] ${tool.description ?? tool.name}`,
        // The server's JSON schema as it is: pi hands parameters to the provider as JSON schema.
        parameters: tool.inputSchema as unknown as ToolDefinition["parameters"],
        async execute(toolCallId, params, signal, onUpdate) {
          if (server.approval === "ask") {
            const answer = await ask(
              {
                toolCallId,
                questionId: "mcp-approval",
                kind: "single",
                prompt: `Allow the MCP server '${server.name}' to run its tool '${tool.name}' with ${JSON.stringify(params).slice(0, 500)}?`,
                options: [
                  { id: "allow", label: "Allow" },
                  { id: "deny", label: "Deny" },
                ],
              },
              signal,
            );
            if (answer.kind === "skip" || !answer.selectedIds?.includes("allow"))
              throw new Error(`The user did not allow this call to ${server.name}'s ${tool.name}.`);
          }
          const result = await mcp.call(owner, server.name, tool.name, params as Record<string, unknown>, {
            ...(signal ? { signal } : {}),
            onProgress: (progress) =>
              onUpdate?.({
                content: [{ type: "text", text: progress.message ?? `progress ${progress.progress}` }],
                details: { progress },
              }),
          });
          if (result.isError) throw new Error(result.text || `${tool.name} failed`);
          return {
            content: [{ type: "text", text: result.text }],
            details: { server: server.name, tool: tool.name, truncated: result.truncated },
          };
        },
      } as ToolDefinition);
    }
  }
  return { tools, diagnostics };
}
