/**
 * HTTP routes of the agents family: thin mapping from requests to the services, with the schemas of
 * schemas/agents.ts documenting every route in Swagger. Errors are FastAPI-style (422 `{detail: [...]}`,
 * else `{detail}`), produced by the shared error handler from the services' AppErrors.
 */
import { Elysia } from "elysia";
import * as S from "../../schemas/agents.ts";
import { DetailError, HTTPValidationError } from "../../schemas/common.ts";
import type { AppContext } from "../context.ts";
import { pageOf } from "../http/paging.ts";
import { type AgentService, invalid } from "./agents-service.ts";
import { type MemoryService, memoryView } from "./memory-service.ts";
import type { SessionService } from "./sessions-service.ts";

const errors = { 404: DetailError, 409: DetailError, 422: HTTPValidationError };

/** An ISO 8601 cursor, normalised to the stored form; anything else is a 422 naming the parameter. */
function cursor(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)
    ? Date.parse(value)
    : Number.NaN;
  if (Number.isNaN(ms))
    throw invalid([
      { loc: ["query", name], msg: "Input should be a valid ISO 8601 datetime", type: "datetime_parsing" },
    ]);
  return new Date(ms).toISOString();
}

export function agentRoutes(ctx: AppContext, agents: AgentService) {
  return new Elysia({ name: "atrium/agents/agents", detail: { tags: ["agents"] } })
    .use(ctx.identity)
    .guard({ owner: true })
    .post("/v1/agents", ({ body, owner }) => agents.view(agents.createAgent(owner, body)), {
      body: S.AgentCreate,
      response: { 200: S.Agent, ...errors },
      detail: {
        summary: "Create an agent",
        description:
          "An agent has a role, capabilities (the spec's enum), a model (`provider/model`; omitted or null follows the server default: settings, else the first configured provider, else the built-in offline model), instructions (its system prompt), config (`temperature`, `max_tokens`, `memory_limit`: memory entries put in its context per message, default 5) and a status. Only `active` agents take part in chats.",
      },
    })
    .get(
      "/v1/agents",
      ({ query, owner }) => {
        const { items, total } = agents.listAgents(owner, {
          ...pageOf(query),
          status: query.status,
        });
        return {
          agents: items.map((a) => agents.view(a)),
          total,
          has_more: pageOf(query).offset + items.length < total,
        };
      },
      {
        query: S.AgentListQuery,
        response: { 200: S.AgentList, 422: HTTPValidationError },
        detail: {
          summary: "List agents",
          description: "Oldest first; `limit` 1..200 (default 50), `offset`, `status` filter, and the total.",
        },
      },
    )
    .get(
      "/v1/agents/:agent_id",
      ({ params, owner }) => agents.view(agents.getAgent(owner, params.agent_id)),
      {
        response: { 200: S.Agent, 404: DetailError },
        detail: { summary: "Read an agent" },
      },
    )
    .patch(
      "/v1/agents/:agent_id",
      ({ params, body, owner }) => agents.view(agents.updateAgent(owner, params.agent_id, body)),
      {
        body: S.AgentUpdate,
        response: { 200: S.Agent, ...errors },
        detail: {
          summary: "Update an agent",
          description: "Only the given fields change; `model: null` returns to the server default.",
        },
      },
    )
    .delete(
      "/v1/agents/:agent_id",
      ({ params, owner }) => {
        agents.deleteAgent(owner, params.agent_id);
        return { id: params.agent_id, deleted: true as const };
      },
      {
        response: { 200: S.Deleted, 404: DetailError, 409: DetailError },
        detail: {
          summary: "Delete an agent",
          description:
            "Refused with 409 while a fleet lists the agent (the message names the fleets): remove it from them first (PATCH the fleet's agent_ids). The agent's memory entries are deleted with it; its chat sessions stay readable.",
        },
      },
    );
}

export function fleetRoutes(ctx: AppContext, agents: AgentService) {
  return new Elysia({ name: "atrium/agents/fleets", detail: { tags: ["agents"] } })
    .use(ctx.identity)
    .guard({ owner: true })
    .post("/v1/fleets", ({ body, owner }) => agents.createFleet(owner, body), {
      body: S.FleetCreate,
      response: { 200: S.Fleet, ...errors },
      detail: {
        summary: "Create a fleet",
        description:
          "A fleet is an ordered list of the caller's agents (every id must exist: 422 names the unknown ones) with a coordination pattern (default `sequential`) and config: `max_turns` (model calls allowed per message, default 10), `temperature` (sent to every member's model, overriding the agent's), `lead_agent_id` (hierarchical lead and parallel merger; a member; default the first).",
      },
    })
    .get(
      "/v1/fleets",
      ({ query, owner }) => {
        const { items, total } = agents.listFleets(owner, {
          ...pageOf(query),
          type: query.type,
          status: query.status,
        });
        return { fleets: items, total, has_more: pageOf(query).offset + items.length < total };
      },
      {
        query: S.FleetListQuery,
        response: { 200: S.FleetList, 422: HTTPValidationError },
        detail: {
          summary: "List fleets",
          description: "Oldest first; filters `type` and `status`; `limit` 1..200, `offset`, and the total.",
        },
      },
    )
    .get("/v1/fleets/:fleet_id", ({ params, owner }) => agents.getFleet(owner, params.fleet_id), {
      response: { 200: S.Fleet, 404: DetailError },
      detail: { summary: "Read a fleet" },
    })
    .patch(
      "/v1/fleets/:fleet_id",
      ({ params, body, owner }) => agents.updateFleet(owner, params.fleet_id, body),
      {
        body: S.FleetUpdate,
        response: { 200: S.Fleet, ...errors },
        detail: {
          summary: "Update a fleet",
          description: "Only the given fields change; `agent_ids` replaces the member list (order matters).",
        },
      },
    )
    .delete(
      "/v1/fleets/:fleet_id",
      ({ params, owner }) => {
        agents.deleteFleet(owner, params.fleet_id);
        return { id: params.fleet_id, deleted: true as const };
      },
      {
        response: { 200: S.Deleted, 404: DetailError },
        detail: {
          summary: "Delete a fleet",
          description: "Its agents stay; the fleet's own memory entries are deleted.",
        },
      },
    );
}

export function memoryRoutes(ctx: AppContext, memory: MemoryService) {
  return new Elysia({ name: "atrium/agents/memory", detail: { tags: ["agents"] } })
    .use(ctx.identity)
    .guard({ owner: true })
    .post("/v1/memory", ({ body, owner }) => memoryView(memory.create(owner, body)), {
      body: S.MemoryCreate,
      response: { 200: S.MemoryEntry, ...errors },
      detail: {
        summary: "Create a memory entry",
        description:
          "An entry belongs to an agent or a fleet (`owner_id` + `owner_type`; it must exist). On every chat message, an agent's context gets its best-matching entries (its own and its fleet's, BM25 over the message's words; when none match, the most important ones), up to the agent's `config.memory_limit` (default 5).",
      },
    })
    .get("/v1/memory/search", ({ query, owner }) => memory.search(owner, { ...query, ...pageOf(query) }), {
      query: S.MemorySearchQuery,
      response: { 200: S.MemorySearchResult, 422: HTTPValidationError },
      detail: {
        summary: "Search memory",
        description:
          "Filters: `owner_id`, `owner_type`, `type`, `tags` (every listed tag must be on the entry). `content_query` is full text (FTS5, porter stemming; any word may match) ranked by BM25, best first, with `score` (higher is better). Without it, entries come by importance, newest first. `limit` 1..200, `offset`, `total`, `has_more`.",
      },
    })
    .get("/v1/memory/:memory_id", ({ params, owner }) => memoryView(memory.get(owner, params.memory_id)), {
      response: { 200: S.MemoryEntry, 404: DetailError },
      detail: { summary: "Read a memory entry" },
    })
    .patch(
      "/v1/memory/:memory_id",
      ({ params, body, owner }) => memoryView(memory.update(owner, params.memory_id, body)),
      {
        body: S.MemoryUpdate,
        response: { 200: S.MemoryEntry, ...errors },
        detail: {
          summary: "Update a memory entry",
          description: "type, content, tags, metadata, importance; its owner does not change.",
        },
      },
    )
    .delete(
      "/v1/memory/:memory_id",
      ({ params, owner }) => {
        memory.delete(owner, params.memory_id);
        return { id: params.memory_id, deleted: true as const };
      },
      { response: { 200: S.Deleted, 404: DetailError }, detail: { summary: "Delete a memory entry" } },
    );
}

export function sessionRoutes(ctx: AppContext, sessions: SessionService) {
  return new Elysia({ name: "atrium/agents/sessions", detail: { tags: ["agents"] } })
    .use(ctx.identity)
    .guard({ owner: true })
    .get(
      "/v1/chat/sessions",
      ({ query, owner }) =>
        sessions.list(owner, {
          ...pageOf(query),
          status: query.status,
          target_id: query.target_id,
          target_type: query.target_type,
        }),
      {
        query: S.SessionListQuery,
        response: { 200: S.SessionList, 422: HTTPValidationError },
        detail: {
          summary: "List chat sessions",
          description:
            "Most recently active first. Status: `active`; `inactive` when the target has no active agent or 30 minutes passed since the last message (a new message reactivates it when the target has an active agent, else it is refused with an error frame `target_inactive`); `ended` after end_session (cannot be resumed). Chat itself is the WebSocket `/v1/chat`: connect with query `target_id` + `target_type` (agent|fleet) or `session_id` (resume), optional `max_turns`, `temperature`, `auth_token`; the server answers `{type: connected, status, session_id, target: {id, type, name}}`. Send `{type: message, content, context?}` (context: `stream: false` for one `response` frame, `thread_id`, `parent_id`, `capabilities` for dynamic routing); replies are `stream` frames `{message_id, chunk, is_complete, metadata: {agent_id, agent_name, phase, step}}`, the last one `is_complete: true` with `metadata.agents` (who spoke, in order). `{type: end_session}` → `session_ended`. Errors are `{type: error, code, message}`; refused connections close with 4400 (bad parameters), 4401, 4404 (unknown target or session), 4409 (target mismatch), 4410 (ended); frames over 256 KiB close with 1009.",
        },
      },
    )
    .get(
      "/v1/chat/sessions/:session_id/history",
      ({ params, query, owner }) =>
        sessions.history(owner, params.session_id, {
          limit: query.limit ?? 50,
          before: cursor(query.before, "before"),
          after: cursor(query.after, "after"),
          thread_id: query.thread_id,
        }),
      {
        query: S.HistoryQuery,
        response: { 200: S.History, 404: DetailError, 422: HTTPValidationError },
        detail: {
          summary: "Chat history",
          description:
            "Messages oldest first. Timestamps are unique within a session, so they are exact cursors. Without cursors, or with `before`: the newest `limit` messages (before it), `has_more` = older ones exist. With only `after`: the oldest `limit` after it, `has_more` = newer ones exist. `thread_id` keeps one thread (a top-level message starts a thread named after its id; replies carry `parent_id` = the user message).",
        },
      },
    );
}
