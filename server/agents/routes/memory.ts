/**
 * HTTP routes of memory (/v1/memory): thin mapping from requests to the memory service, documented in
 * Swagger by the schemas of schemas/agents.ts.
 */
import { Elysia } from "elysia";
import * as S from "../../../schemas/agents.ts";
import { DetailError, HTTPValidationError } from "../../../schemas/common.ts";
import type { AppContext } from "../../context.ts";
import { pageOf } from "../../http/paging.ts";
import type { MemoryService } from "../services/memory.ts";
import { ERRORS } from "./responses.ts";

export function memoryRoutes(
  { identity }: Pick<AppContext, "identity">,
  { memory }: { memory: MemoryService },
) {
  return new Elysia({ name: "atrium/agents/memory", detail: { tags: ["agents"] } })
    .use(identity)
    .guard({ owner: true })
    .post("/v1/memory", ({ body, owner }) => memory.create(owner, body), {
      body: S.MemoryCreate,
      response: { 200: S.MemoryEntry, ...ERRORS },
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
    .get("/v1/memory/:memory_id", ({ params, owner }) => memory.get(owner, params.memory_id), {
      response: { 200: S.MemoryEntry, 404: DetailError },
      detail: { summary: "Read a memory entry" },
    })
    .patch(
      "/v1/memory/:memory_id",
      ({ params, body, owner }) => memory.update(owner, params.memory_id, body),
      {
        body: S.MemoryUpdate,
        response: { 200: S.MemoryEntry, ...ERRORS },
        detail: {
          summary: "Update a memory entry",
          description: "type, content, tags, metadata, importance; its owner does not change.",
        },
      },
    )
    .delete(
      "/v1/memory/:memory_id",
      async ({ params, owner }) => {
        await memory.delete(owner, params.memory_id);
        return { id: params.memory_id, deleted: true as const };
      },
      { response: { 200: S.Deleted, 404: DetailError }, detail: { summary: "Delete a memory entry" } },
    );
}
