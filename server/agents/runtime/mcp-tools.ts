/**
 * The MCP tools an agent may call: those of the servers its config lists (`mcp_servers`) that are set
 * to "allow", named `<server>__<tool>` as in chat, called through the shared MCP client
 * (server/mcp-client/) as the owner. A listed server set to "ask before each call" gives no tools: an
 * agent replies unattended (over HTTP, through /mcp's ask_agent, inside a fleet), so there is nobody
 * whose answer a call could wait for. That, a missing or disabled server, or one that cannot be reached
 * is said in a notice (a `notice` frame on the socket); the reply goes on without those tools.
 */
import type { McpClients } from "../../mcp-client/clients.ts";
import type { AgentTool } from "./agent-call.ts";

export interface AgentMcpTools {
  tools: AgentTool[];
  /** Why a listed server gave no tools, one sentence each. */
  notices: string[];
}

export async function agentMcpTools(
  mcp: Pick<McpClients, "configs" | "tools" | "call">,
  owner: string,
  servers: string[],
): Promise<AgentMcpTools> {
  const configs = await mcp.configs(owner);
  const tools: AgentTool[] = [];
  const notices: string[] = [];
  for (const name of new Set(servers)) {
    const server = configs.find((s) => s.name === name);
    if (!server) {
      notices.push(`The MCP server '${name}' this agent lists is not configured.`);
      continue;
    }
    if (!server.enabled) {
      notices.push(`The MCP server '${name}' is disabled.`);
      continue;
    }
    if (server.approval !== "allow") {
      notices.push(
        `The MCP server '${name}' asks before each call, and an agent replies unattended: its tools are not offered to agents. Set it to "allow" in Settings to let agents use it.`,
      );
      continue;
    }
    const listed = await mcp.tools(owner, server.name).catch((error: Error) => {
      notices.push(`The MCP server '${name}' could not be reached: ${error.message}`);
      return [];
    });
    for (const tool of listed)
      tools.push({
        name: `${server.name}__${tool.name.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, 64),
        description: `[MCP server ${server.name}] ${tool.description ?? tool.name}`,
        // The server's JSON schema as it is: pi-ai hands parameters to the provider as JSON schema.
        parameters: tool.inputSchema as unknown as AgentTool["parameters"],
        run: (args, signal) => mcp.call(owner, server.name, tool.name, args, { signal }),
      });
  }
  return { tools, notices };
}
