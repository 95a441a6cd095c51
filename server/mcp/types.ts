/** What a tool of the MCP server is and what it gets (tools.ts lists them; server.ts runs them). */
import type { McpToolName } from "../../schemas/mcp.ts";
import type { Scope } from "../auth/scopes.ts";
import type { AtriumHttp } from "./http.ts";

/** MCP tool result content: text, or a link to a resource the client may read. */
export type Content =
  | { type: "text"; text: string }
  | { type: "resource_link"; uri: string; name: string; mimeType?: string; description?: string };

export interface ToolContext {
  http: AtriumHttp;
  /** Reports progress (a no-op when the client asked for none). */
  progress(message: string): void;
  /** Whether the call was cancelled (by the client, or by its going away). */
  cancelled(): boolean;
}

export interface Tool {
  name: McpToolName;
  /** One line a model can act on. */
  description: string;
  /** The access-token scope of the family route it calls. */
  scope: Scope;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<Content[]>;
}

/** A tool that ran and failed: its content is the result, marked as an error. */
export class ToolFailure extends Error {
  constructor(
    message: string,
    readonly content: Content[],
  ) {
    super(message);
  }
}
