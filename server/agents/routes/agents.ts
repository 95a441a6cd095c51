/**
 * HTTP routes of agents (/v1/agents): thin mapping from requests to the agent service, with the schemas
 * of schemas/agents.ts documenting every route in Swagger. Errors are FastAPI-style, produced by the
 * shared error handler from the service's AppErrors.
 */
import { Elysia } from "elysia";
import * as S from "../../../schemas/agents.ts";
import { DetailError, HTTPValidationError } from "../../../schemas/common.ts";
import type { AppContext } from "../../context.ts";
import { pageOf } from "../../http/paging.ts";
import type { AgentService } from "../services/agents.ts";
import { ERRORS } from "./responses.ts";

export function agentRoutes(
  { identity }: Pick<AppContext, "identity">,
  { agents }: { agents: AgentService },
) {
  return new Elysia({ name: "atrium/agents/agents", detail: { tags: ["agents"] } })
    .use(identity)
    .guard({ owner: true })
    .post("/v1/agents", ({ body, owner }) => agents.create(owner, body), {
      body: S.AgentCreate,
      response: { 200: S.Agent, ...ERRORS },
      detail: {
        summary: "Create an agent",
        description:
          "An agent has a role, capabilities (the contract's enum), a model (`provider/model`; omitted or null follows the server default: settings, else the first configured provider, else the built-in offline model), instructions (its system prompt), config (`temperature`, `max_tokens`, `memory_limit`: memory entries put in its context per message, default 5) and a status. Only `active` agents take part in chats.",
      },
    })
    .get("/v1/agents", ({ query, owner }) => agents.list(owner, { ...pageOf(query), status: query.status }), {
      query: S.AgentListQuery,
      response: { 200: S.AgentList, 422: HTTPValidationError },
      detail: {
        summary: "List agents",
        description: "Oldest first; `limit` 1..200 (default 50), `offset`, `status` filter, and the total.",
      },
    })
    .get("/v1/agents/:agent_id", ({ params, owner }) => agents.get(owner, params.agent_id), {
      response: { 200: S.Agent, 404: DetailError },
      detail: { summary: "Read an agent" },
    })
    .patch("/v1/agents/:agent_id", ({ params, body, owner }) => agents.update(owner, params.agent_id, body), {
      body: S.AgentUpdate,
      response: { 200: S.Agent, ...ERRORS },
      detail: {
        summary: "Update an agent",
        description: "Only the given fields change; `model: null` returns to the server default.",
      },
    })
    .delete(
      "/v1/agents/:agent_id",
      async ({ params, owner }) => {
        await agents.delete(owner, params.agent_id);
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
