/**
 * One MCP session's server: the official SDK's low-level `Server` with Atrium's tools (tools.ts) and
 * resources (resources.ts). Every call runs with the credential of the HTTP request that carried it
 * (`authInfo.extra.caller`, set by routes.ts), so a token revoked mid-session stops working at once.
 * Arguments are checked against the tool's schema before it runs; an unknown tool is a JSON-RPC error
 * naming the tools there are; a tool that fails answers `isError` with the family's message. A call
 * ends when the client cancels it (`notifications/cancelled`) or goes away (the HTTP request's signal).
 */

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { covers } from "../auth/scopes.ts";
import { APP_VERSION } from "../version.ts";
import { AtriumHttp, type Caller, type Handle, ToolError } from "./http.ts";
import { listResources, RESOURCE_TEMPLATES, readResource } from "./resources.ts";
import { TOOL_INPUTS, TOOLS } from "./tools.ts";
import { type Content, ToolFailure } from "./types.ts";

/** The transport routes.ts opens each session with; exported here so the SDK loads in one import. */
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";

/** What routes.ts attaches to each MCP request (the SDK hands it to the handlers as `authInfo.extra`). */
export interface CallerInfo {
  caller: Caller;
  /** An access token's scopes, or undefined for credentials that reach everything. */
  scopes?: readonly string[];
}

interface Extra {
  authInfo?: { extra?: Record<string, unknown> };
  signal: AbortSignal;
}

function callerOf(extra: Extra): CallerInfo {
  const info = extra.authInfo?.extra?.atrium as CallerInfo | undefined;
  if (!info) throw new McpError(ErrorCode.InternalError, "No caller on this request");
  return info;
}

/** JSON Schema as plain data (TypeBox objects carry symbol keys). */
const plain = (schema: object) => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

export function createMcpServer(handle: Handle): Server {
  const server = new Server(
    { name: "atrium", title: "Atrium", version: APP_VERSION },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        "Atrium's tools act on the signed-in user's own data: search indexes, Python turns in their sandbox, agents and fleets, agent memory, and workspace files.",
    },
  );
  const httpFor = (info: CallerInfo, signal: AbortSignal) =>
    new AtriumHttp(handle, { ...info.caller, signal: AbortSignal.any([signal, info.caller.signal]) });

  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => {
    const { scopes } = callerOf(extra);
    return {
      tools: TOOLS.filter((tool) => !scopes || covers(scopes, tool.scope)).map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: plain(TOOL_INPUTS[tool.name]),
      })),
    };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const info = callerOf(extra);
    const { name } = request.params;
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool '${String(name).slice(0, 100)}'. Atrium's tools: ${TOOLS.map((t) => t.name).join(", ")}`,
      );
    if (info.scopes && !covers(info.scopes, tool.scope))
      return failed(`This access token lacks the scope '${tool.scope}' that ${tool.name} needs`);
    const args = request.params.arguments ?? {};
    const schema = TOOL_INPUTS[tool.name] as TSchema;
    if (!Value.Check(schema, args)) {
      const first = [...Value.Errors(schema, args)][0];
      return failed(
        `Invalid arguments for ${tool.name}: ${first?.path || "/"} ${first?.message ?? "is invalid"}`,
      );
    }
    const http = httpFor(info, extra.signal);
    const token = request.params._meta?.progressToken;
    let step = 0;
    const progress = (message: string) => {
      if (token === undefined) return;
      const params = { progressToken: token, progress: ++step, message };
      extra.sendNotification({ method: "notifications/progress", params }).catch(() => {});
    };
    const signal = AbortSignal.any([extra.signal, info.caller.signal]);
    try {
      return { content: await tool.run(args, { http, progress, cancelled: () => signal.aborted }) };
    } catch (error) {
      if (error instanceof ToolFailure) return { content: error.content, isError: true };
      if (signal.aborted) throw new McpError(ErrorCode.RequestTimeout, "The call was cancelled");
      return failed(error instanceof ToolError ? error.message : (error as Error).message);
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => ({
    resources: await listResources(httpFor(callerOf(extra), extra.signal)),
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: RESOURCE_TEMPLATES,
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    try {
      return { contents: [await readResource(httpFor(callerOf(extra), extra.signal), request.params.uri)] };
    } catch (error) {
      throw new McpError(ErrorCode.InvalidParams, (error as Error).message);
    }
  });
  return server;
}

function failed(message: string): { content: Content[]; isError: true } {
  return { content: [{ type: "text", text: message }], isError: true };
}
