/**
 * The tools of Atrium's MCP server: each a name, a one-line description a model can act on, its input
 * schema (schemas/mcp.ts), the access-token scope of the family route it calls (tools/list shows a
 * token only the tools its scopes cover), and what it does, always through the family's HTTP routes
 * (http.ts). Answers are text a model reads; a turn's artifacts also come as resource links.
 */
import { McpToolInputs, type McpToolName } from "../../schemas/mcp.ts";
import type { AtriumHttp } from "./http.ts";
import { runPython } from "./run-python.ts";
import type { Content, Tool } from "./types.ts";

const text = (value: unknown): Content[] => [
  { type: "text", text: typeof value === "string" ? value : JSON.stringify(value, null, 2) },
];
const query = (params: Record<string, unknown>) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(key, String(item));
  }
  const encoded = search.toString();
  return encoded ? `?${encoded}` : "";
};

/** An agent's or fleet's id from its id or name (names are matched exactly, then case-insensitively). */
async function resolveTarget(http: AtriumHttp, kind: "agents" | "fleets", idOrName: string): Promise<string> {
  const list = await http.json<Record<string, { id: string; name: string }[]>>(
    "GET",
    `/v1/${kind}?limit=200`,
  );
  const items = list[kind] ?? [];
  const found =
    items.find((x) => x.id === idOrName) ??
    items.find((x) => x.name === idOrName) ??
    items.find((x) => x.name.toLowerCase() === idOrName.toLowerCase());
  if (!found) throw new Error(`No ${kind.slice(0, -1)} with the id or name '${idOrName}'`);
  return found.id;
}

async function ask(http: AtriumHttp, type: "agent" | "fleet", args: Record<string, unknown>) {
  const body = args.session_id
    ? { session_id: args.session_id, content: args.message }
    : {
        target_id: await resolveTarget(http, `${type}s`, String(args[type])),
        target_type: type,
        content: args.message,
      };
  const reply = await http.json<{ session_id: string; content: string; agents: { agent_name: string }[] }>(
    "POST",
    "/v1/chat/messages",
    body,
  );
  const who = [...new Set(reply.agents.map((a) => a.agent_name))].join(", ");
  return text(`${reply.content}\n\n(session_id: ${reply.session_id}${who ? `; answered by ${who}` : ""})`);
}

async function search(http: AtriumHttp, kind: "local" | "global", args: Record<string, unknown>) {
  const answer = await http.json<{ response: string; context_data?: Record<string, unknown[]> }>(
    "POST",
    `/search/${kind}`,
    { query: args.query, ...(args.index ? { index: args.index } : {}) },
  );
  const sources = (answer.context_data?.sources ?? []).slice(0, 5);
  return text(sources.length ? { answer: answer.response, sources } : answer.response);
}

export const TOOLS: Tool[] = [
  {
    name: "list_indexes",
    description: "List the user's search indexes with their document and entity counts.",
    scope: "search:read",
    run: async (_args, { http }) => text(await http.json("GET", "/search/indexes")),
  },
  {
    name: "search_local",
    description:
      "Answer a specific question from a search index (entities, their relations and source passages).",
    scope: "search",
    run: (args, { http }) => search(http, "local", args),
  },
  {
    name: "search_global",
    description:
      "Answer a broad question about a whole search index from its community reports (themes, overviews).",
    scope: "search",
    run: (args, { http }) => search(http, "global", args),
  },
  {
    name: "run_python",
    description:
      "Run Python in the user's sandbox as a turn; returns the answer, the printed output and links to artifacts it created.",
    scope: "turns",
    run: (args, ctx) => runPython(ctx, String(args.code), args.session_id as string | undefined),
  },
  {
    name: "ask_agent",
    description: "Send a message to one of the user's agents (by id or name) and return its reply.",
    scope: "agents",
    run: (args, { http }) => ask(http, "agent", args),
  },
  {
    name: "ask_fleet",
    description:
      "Send a message to one of the user's fleets of agents (by id or name) and return their combined reply.",
    scope: "agents",
    run: (args, { http }) => ask(http, "fleet", args),
  },
  {
    name: "memory_search",
    description: "Search an agent's or fleet's memory entries by words and tags, best matches first.",
    scope: "agents:read",
    run: async (args, { http }) =>
      text(
        await http.json(
          "GET",
          `/v1/memory/search${query({ owner_id: args.owner_id, owner_type: args.owner_type, content_query: args.query, tags: args.tags, limit: args.limit ?? 10 })}`,
        ),
      ),
  },
  {
    name: "memory_read",
    description: "Read one memory entry by its id.",
    scope: "agents:read",
    run: async (args, { http }) =>
      text(await http.json("GET", `/v1/memory/${encodeURIComponent(String(args.memory_id))}`)),
  },
  {
    name: "memory_add",
    description: "Add a memory entry to an agent or fleet, recalled when later messages match it.",
    scope: "agents",
    run: async (args, { http }) => text(await http.json("POST", "/v1/memory", args)),
  },
  {
    name: "list_files",
    description: "List the files and folders in the user's workspace files (one folder, not recursive).",
    scope: "turns:read",
    run: async (args, { http }) => text(await http.json("GET", `/api/files${query({ path: args.path })}`)),
  },
  {
    name: "read_file",
    description: "Read a UTF-8 file from the user's workspace files, one bounded page at a time.",
    scope: "turns:read",
    run: async (args, { http }) => {
      const page = await http.json<{ content: string; nextOffset: number | null; size: number }>(
        "GET",
        `/api/files/content${query({ path: args.path, offset: args.offset })}`,
      );
      const more =
        page.nextOffset === null
          ? ""
          : `\n\n(more: read again with offset ${page.nextOffset} of ${page.size} bytes)`;
      return text(`${page.content}${more}`);
    },
  },
  {
    name: "write_file",
    description:
      "Create a UTF-8 file in the user's workspace files (overwrite: true replaces an existing one).",
    scope: "turns",
    run: async (args, { http }) => text(await http.json("PUT", "/api/files/content", args)),
  },
];

export const TOOL_INPUTS: Record<McpToolName, object> = McpToolInputs;
