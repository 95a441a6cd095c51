/**
 * Wire types of the MCP servers a user adds as tools (server/mcp-client/, docs/mcp-tools.md): the body
 * that adds or replaces one, and what the list answers. Secrets (a token, header values) go in and are
 * never sent back: the answer names the headers and says whether a token is stored.
 */
import { t } from "elysia";

export const McpServerName = t.String({
  pattern: "^[a-z][a-z0-9_-]{0,31}$",
  description: "lower case letters, digits, - and _ (the prefix of its tools' names)",
});

export const McpApproval = t.Union([t.Literal("ask"), t.Literal("allow")], {
  description: "ask: the user confirms each call; allow: calls run without asking",
});

export const McpServerBody = t.Object(
  {
    name: McpServerName,
    transport: t.Union([t.Literal("http"), t.Literal("stdio")]),
    url: t.Optional(t.String({ maxLength: 2048, description: "http: the Streamable HTTP endpoint" })),
    headers: t.Optional(
      t.Record(t.String({ maxLength: 64 }), t.String({ maxLength: 8192 }), {
        description: "http: headers sent with every request (stored, never shown again)",
      }),
    ),
    token: t.Optional(
      t.String({ maxLength: 8192, description: "http: sent as Authorization: Bearer (never shown again)" }),
    ),
    command: t.Optional(
      t.String({ minLength: 1, maxLength: 1024, description: "stdio: run in your own sandbox" }),
    ),
    args: t.Optional(t.Array(t.String({ maxLength: 4096 }), { maxItems: 64 })),
    approval: t.Optional(McpApproval),
    enabled: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
);

export const McpServerUpdate = t.Object(
  { approval: t.Optional(McpApproval), enabled: t.Optional(t.Boolean()) },
  {
    additionalProperties: false,
    minProperties: 1,
    description: "Changes one of your servers' approval or enabled flag; its secrets stay as stored",
  },
);

export const McpServerInfo = t.Object({
  name: t.String(),
  scope: t.Union([t.Literal("user"), t.Literal("admin")]),
  transport: t.Union([t.Literal("http"), t.Literal("stdio")]),
  url: t.Optional(t.String()),
  command: t.Optional(t.String()),
  args: t.Array(t.String()),
  /** Names of the stored headers; their values are never returned. */
  headerNames: t.Array(t.String()),
  hasToken: t.Boolean(),
  approval: McpApproval,
  enabled: t.Boolean(),
});

export const McpServerList = t.Object({ servers: t.Array(McpServerInfo) });
export const McpServerParams = t.Object({ name: McpServerName });
export const McpServerRemoved = t.Object({ removed: t.Boolean() });

export const McpToolInfo = t.Object({
  name: t.String(),
  description: t.Optional(t.String()),
  inputSchema: t.Record(t.String(), t.Unknown()),
});
export const McpServerTools = t.Object({ server: t.String(), tools: t.Array(McpToolInfo) });

export type McpServerBody = typeof McpServerBody.static;
export type McpServerUpdate = typeof McpServerUpdate.static;
export type McpServerInfo = typeof McpServerInfo.static;
export type McpToolInfo = typeof McpToolInfo.static;
