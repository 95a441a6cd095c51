/**
 * Atrium's MCP server, as the app mounts it (server/app.ts): the /mcp routes, the docs tag, and the
 * sessions to close at shutdown. Its tools reach the families through `handle` (the composed app's own
 * `app.handle`), never by importing them.
 */
import type { AppContext } from "../context.ts";
import type { Handle } from "./http.ts";
import { McpSessions, mcpRoutes } from "./routes.ts";

export const MCP_TAG = {
  name: "mcp",
  description:
    "Atrium as an MCP server (Streamable HTTP, /mcp): tools and resources over the caller's own data in every family (docs/mcp.md).",
};

export function atriumMcp(ctx: AppContext, handle: Handle) {
  const sessions = new McpSessions({
    handle,
    identity: ctx.identity,
    tokensOnly: ctx.config.mode.kind === "protected",
    connections: ctx.connections,
    log: ctx.log,
  });
  return { routes: mcpRoutes(sessions, ctx.identity), sessions, close: () => sessions.close() };
}
