/**
 * The MCP servers a user adds as tools (docs/mcp-tools.md): list (the operator's and their own, never a
 * secret), add or replace, change approval or enabled (secrets kept), remove, and list one server's tools (connecting to it: a check that it works).
 * Thin: the shared MCP client service (server/mcp-client/) does the work.
 */
import { Elysia } from "elysia";
import { ChatError } from "../../../schemas/common.ts";
import {
  McpServerBody,
  McpServerInfo,
  McpServerList,
  McpServerParams,
  McpServerRemoved,
  McpServerTools,
  McpServerUpdate,
} from "../../../schemas/mcp-servers.ts";
import type { AppContext } from "../../context.ts";
import type { McpClients } from "../../mcp-client/clients.ts";

const tags = ["chat"];

export function mcpServerRoutes(ctx: AppContext, { mcp }: { mcp: McpClients }) {
  return new Elysia({ name: "atrium/chat/mcp-servers" })
    .use(ctx.identity)
    .guard({ owner: true })
    .get("/api/chat/mcp-servers", async ({ owner }) => ({ servers: await mcp.list(owner) }), {
      response: { 200: McpServerList },
      detail: { summary: "MCP servers you may use as tools: the operator's and your own (no secrets)", tags },
    })
    .post("/api/chat/mcp-servers", ({ body, owner }) => mcp.put(owner, body), {
      body: McpServerBody,
      response: { 200: McpServerInfo, 400: ChatError, 409: ChatError },
      detail: {
        summary:
          "Add or replace one of your MCP servers: http by url (headers or token stored, never shown again) or stdio by command (run in your sandbox)",
        tags,
      },
    })
    .patch("/api/chat/mcp-servers/:name", ({ params, body, owner }) => mcp.update(owner, params.name, body), {
      params: McpServerParams,
      body: McpServerUpdate,
      response: { 200: McpServerInfo, 400: ChatError, 404: ChatError, 409: ChatError },
      detail: {
        summary: "Set one of your MCP servers to ask or allow, or enable or disable it (secrets stay stored)",
        tags,
      },
    })
    .delete(
      "/api/chat/mcp-servers/:name",
      async ({ params, owner }) => ({ removed: await mcp.remove(owner, params.name) }),
      {
        params: McpServerParams,
        response: { 200: McpServerRemoved, 400: ChatError },
        detail: { summary: "Remove one of your MCP servers", tags },
      },
    )
    .get(
      "/api/chat/mcp-servers/:name/tools",
      async ({ params, owner }) => ({ server: params.name, tools: await mcp.tools(owner, params.name) }),
      {
        params: McpServerParams,
        response: { 200: McpServerTools, 400: ChatError, 404: ChatError, 502: ChatError },
        detail: { summary: "Connect to an MCP server and list its tools", tags },
      },
    );
}
