/**
 * The input schemas of the tools Atrium's MCP server offers at /mcp (server/mcp/tools.ts): JSON Schema
 * through TypeBox, sent as each tool's `inputSchema` and checked before the tool runs. Schemas only.
 */
import { t } from "elysia";
import { Integer } from "./common.ts";

const Index = t.Optional(t.String({ maxLength: 200, description: "the index name (default: default)" }));
const Query = t.String({ minLength: 1, maxLength: 10_000, description: "the question" });
const Holder = {
  owner_id: t.String({ maxLength: 100, description: "the agent's or fleet's id" }),
  owner_type: t.Union([t.Literal("agent"), t.Literal("fleet")]),
};
const Path = t.String({ minLength: 1, maxLength: 1024, description: "a path inside the user's files" });

export const McpToolInputs = {
  list_indexes: t.Object({}),
  search_local: t.Object({ query: Query, index: Index }),
  search_global: t.Object({ query: Query, index: Index }),
  run_python: t.Object({
    code: t.String({ minLength: 1, maxLength: 100_000, description: "Python source to run" }),
    session_id: t.Optional(
      t.String({ maxLength: 100, description: "a turn session to run in (default: a new one)" }),
    ),
  }),
  ask_agent: t.Object({
    agent: t.String({ minLength: 1, maxLength: 200, description: "the agent's id or name" }),
    message: t.String({ minLength: 1, maxLength: 100_000 }),
    session_id: t.Optional(t.String({ maxLength: 100, description: "continue this conversation" })),
  }),
  ask_fleet: t.Object({
    fleet: t.String({ minLength: 1, maxLength: 200, description: "the fleet's id or name" }),
    message: t.String({ minLength: 1, maxLength: 100_000 }),
    session_id: t.Optional(t.String({ maxLength: 100, description: "continue this conversation" })),
  }),
  memory_search: t.Object({
    ...Holder,
    query: t.Optional(
      t.String({ maxLength: 1000, description: "words to rank by (default: most important)" }),
    ),
    tags: t.Optional(t.Array(t.String({ maxLength: 100 }), { maxItems: 20 })),
    limit: t.Optional(Integer({ minimum: 1, maximum: 50 })),
  }),
  memory_read: t.Object({ memory_id: t.String({ maxLength: 100 }) }),
  memory_add: t.Object({
    ...Holder,
    type: t.Union(["CONTEXT", "PREFERENCES", "INSIGHTS", "HISTORY", "SKILLS"].map((v) => t.Literal(v))),
    content: t.String({ minLength: 1, maxLength: 100_000 }),
    tags: t.Optional(t.Array(t.String({ maxLength: 100 }), { maxItems: 20 })),
    importance: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
  }),
  list_files: t.Object({
    path: t.Optional(t.String({ maxLength: 1024, description: "a folder (default: the top)" })),
  }),
  read_file: t.Object({
    path: Path,
    offset: t.Optional(Integer({ minimum: 0, description: "byte offset of the page" })),
  }),
  write_file: t.Object({
    path: Path,
    content: t.String({ maxLength: 5_000_000 }),
    overwrite: t.Optional(t.Boolean({ description: "replace an existing file (default: refuse)" })),
  }),
};

export type McpToolName = keyof typeof McpToolInputs;
