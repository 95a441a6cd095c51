/**
 * HTTP routes of fleets (/v1/fleets): thin mapping from requests to the fleet service, documented in
 * Swagger by the schemas of schemas/agents.ts.
 */
import { Elysia } from "elysia";
import * as S from "../../../schemas/agents.ts";
import { DetailError, HTTPValidationError } from "../../../schemas/common.ts";
import type { AppContext } from "../../context.ts";
import { pageOf } from "../../http/paging.ts";
import type { FleetService } from "../services/fleets.ts";
import { ERRORS } from "./responses.ts";

export function fleetRoutes(
  { identity }: Pick<AppContext, "identity">,
  { fleets }: { fleets: FleetService },
) {
  return new Elysia({ name: "atrium/agents/fleets", detail: { tags: ["agents"] } })
    .use(identity)
    .guard({ owner: true })
    .post("/v1/fleets", ({ body, owner }) => fleets.create(owner, body), {
      body: S.FleetCreate,
      response: { 200: S.Fleet, ...ERRORS },
      detail: {
        summary: "Create a fleet",
        description:
          "A fleet is an ordered list of the caller's agents (every id must exist: 422 names the unknown ones) with a coordination pattern (default `sequential`) and config: `max_turns` (model calls allowed per message, default 10), `temperature` (sent to every member's model, overriding the agent's), `lead_agent_id` (hierarchical lead and parallel merger; a member; default the first).",
      },
    })
    .get(
      "/v1/fleets",
      ({ query, owner }) => fleets.list(owner, { ...pageOf(query), type: query.type, status: query.status }),
      {
        query: S.FleetListQuery,
        response: { 200: S.FleetList, 422: HTTPValidationError },
        detail: {
          summary: "List fleets",
          description: "Oldest first; filters `type` and `status`; `limit` 1..200, `offset`, and the total.",
        },
      },
    )
    .get("/v1/fleets/:fleet_id", ({ params, owner }) => fleets.get(owner, params.fleet_id), {
      response: { 200: S.Fleet, 404: DetailError },
      detail: { summary: "Read a fleet" },
    })
    .patch("/v1/fleets/:fleet_id", ({ params, body, owner }) => fleets.update(owner, params.fleet_id, body), {
      body: S.FleetUpdate,
      response: { 200: S.Fleet, ...ERRORS },
      detail: {
        summary: "Update a fleet",
        description: "Only the given fields change; `agent_ids` replaces the member list (order matters).",
      },
    })
    .delete(
      "/v1/fleets/:fleet_id",
      async ({ params, owner }) => {
        await fleets.delete(owner, params.fleet_id);
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
