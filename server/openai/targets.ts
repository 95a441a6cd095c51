/**
 * The model kinds that are not a provider model: agents, fleets, Python turns and search indexes. Each
 * goes through its family's own HTTP routes in process with the caller's credential (AtriumHttp, as the
 * MCP server's tools do), so only the caller's own targets are found and the token's scopes are
 * checked again there. A name or id never becomes a path: targets are found in the caller's lists.
 */
import { AppError } from "../http/errors.ts";
import { type AtriumHttp, ToolError } from "../mcp/http.ts";
import { agentPieces } from "./agents.ts";
import { fromFamily, modelNotFound } from "./errors.ts";
import type { ModelKind } from "./kinds.ts";
import type { Pieces } from "./output.ts";
import { type ChatRequest, lastUserText } from "./request.ts";
import { rlmPieces } from "./rlm.ts";

type Listed = { id: string; kind: "agent" | "fleet" | "search" };

async function listOf<T>(http: AtriumHttp, path: string, key: string): Promise<T[]> {
  try {
    return ((await http.json<Record<string, T[]>>("GET", path))[key] ?? []) as T[];
  } catch (error) {
    if (error instanceof ToolError && (error.status === 403 || error.status === 404)) return [];
    throw fromFamily(error);
  }
}

/** The caller's agents, fleets and indexes as model ids (each only when the token reads that family). */
export async function targetModels(
  http: AtriumHttp,
  reaches: (scope: "agents:read" | "search:read") => boolean,
) {
  const out: Listed[] = [];
  if (reaches("agents:read")) {
    for (const a of await listOf<{ name: string }>(http, "/v1/agents?limit=200&status=active", "agents"))
      out.push({ id: `agent/${a.name}`, kind: "agent" });
    for (const f of await listOf<{ name: string }>(http, "/v1/fleets?limit=200", "fleets"))
      out.push({ id: `fleet/${f.name}`, kind: "fleet" });
  }
  if (reaches("search:read"))
    for (const i of await listOf<{ name: string }>(http, "/search/indexes", "indexes")) {
      out.push({ id: `search/${i.name}`, kind: "search" });
      out.push({ id: `search/${i.name}/global`, kind: "search" });
    }
  return out;
}

/** An agent's or fleet's id from its id or name, among the caller's own; model_not_found otherwise. */
export async function findTarget(http: AtriumHttp, type: "agent" | "fleet", ref: string, model: string) {
  const items = await listOf<{ id: string; name: string }>(http, `/v1/${type}s?limit=200`, `${type}s`);
  const found =
    items.find((x) => x.id === ref) ??
    items.find((x) => x.name === ref) ??
    items.find((x) => x.name.toLowerCase() === ref.toLowerCase());
  if (!found) throw modelNotFound(model);
  return found.id;
}

export async function targetPieces(
  http: AtriumHttp,
  kind: Exclude<ModelKind, { kind: "provider" }>,
  request: ChatRequest,
  idempotencyKey?: string,
): Promise<Pieces> {
  const question = lastUserText(request.messages);
  if (!question.trim())
    throw new AppError("invalid", "The last user message is empty", {
      issues: [{ loc: ["body", "messages"], msg: "no user text", type: "value_error" }],
    });
  switch (kind.kind) {
    case "agent":
    case "fleet": {
      const id = await findTarget(http, kind.kind, kind.ref, request.model);
      return (signal) => agentPieces(http, { type: kind.kind, id, content: question }, signal);
    }
    case "search": {
      const indexes = await listOf<{ name: string }>(http, "/search/indexes", "indexes");
      if (!indexes.some((i) => i.name === kind.index)) throw modelNotFound(request.model);
      return (signal) => searchPieces(http, kind, question, signal);
    }
    case "rlm":
      return rlmPieces(http, kind, question, idempotencyKey);
  }
}

async function* searchPieces(
  http: AtriumHttp,
  kind: { index: string; method: "local" | "global" },
  query: string,
  _signal: AbortSignal,
) {
  let answer: { response: string; context_data?: Record<string, unknown[]> };
  try {
    answer = await http.json("POST", `/search/${kind.method}`, { query, index: kind.index });
  } catch (error) {
    throw fromFamily(error);
  }
  yield { type: "text" as const, text: answer.response };
  yield { type: "extra" as const, key: "context_data", value: answer.context_data ?? {} };
  yield { type: "finish" as const, reason: "stop" as const };
}
