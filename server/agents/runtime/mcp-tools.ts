/**
 * The MCP tools an agent may call: those of the servers its config lists (`mcp_servers`) that are set
 * to "allow" (nobody is asked in the middle of an agent's reply), named `<server>__<tool>` as in chat,
 * called through the shared MCP client (server/mcp-client/) as the owner. A listed server that is
 * missing, asks, or cannot be reached gives no tools; the reply goes on without them.
 */
import type { McpClients } from "../../mcp-client/clients.ts";
import type { AgentTool } from "./agent-call.ts";

export async function agentMcpTools(
  mcp: Pick<McpClients, "configs" | "tools" | "call">,
  owner: string,
  servers: string[],
): Promise<AgentTool[]> {
  const usable = mcp
    .configs(owner)
    .filter((s) => s.enabled && s.approval === "allow" && servers.includes(s.name));
  const tools: AgentTool[] = [];
  for (const server of usable) {
    const listed = await mcp.tools(owner, server.name).catch(() => []);
    for (const tool of listed)
      tools.push({
        name: `${server.name}__${tool.name.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, 64),
        description: `[MCP server ${server.name}] ${tool.description ?? tool.name}`,
        // The server's JSON schema as it is: pi-ai hands parameters to the provider as JSON schema.
        parameters: tool.inputSchema as unknown as AgentTool["parameters"],
        run: (args, signal) => mcp.call(owner, server.name, tool.name, args, { signal }),
      });
  }
  return tools;
}
