/**
 * The graph view's routes (Atrium extension): an index's graph in columns, laid out for drawing, and one
 * entity's details. Thin: the schemas validate (FastAPI's 422), the graph service does the work; an index
 * of another owner is a 404 like an unknown one.
 */
import { Elysia } from "elysia";
import { DetailError, HTTPValidationError } from "../../../schemas/common.ts";
import {
  GraphEntity,
  GraphEntityParams,
  GraphQuery,
  IndexGraph,
  IndexParams,
} from "../../../schemas/search.ts";
import type { AppContext } from "../../context.ts";
import type { SearchGraphService } from "../services/graph.ts";

const tags = ["search"];

export function graphRoutes(ctx: Pick<AppContext, "identity">, services: { graph: SearchGraphService }) {
  return new Elysia({ name: "atrium/search/graph" })
    .use(ctx.identity)
    .guard({ owner: true })
    .get(
      "/search/indexes/:index/graph",
      ({ owner, params, query }) => services.graph.view(owner, params.index, query.limit),
      {
        params: IndexParams,
        query: GraphQuery,
        response: { 200: IndexGraph, 404: DetailError, 422: HTTPValidationError },
        detail: {
          tags,
          summary:
            "An index's graph for drawing: the most connected entities with positions and communities, and the relationships among them, as columns (Atrium extension)",
        },
      },
    )
    .get(
      "/search/indexes/:index/graph/entities/:id",
      ({ owner, params }) => services.graph.entity(owner, params.index, params.id),
      {
        params: GraphEntityParams,
        response: { 200: GraphEntity, 404: DetailError, 422: HTTPValidationError },
        detail: {
          tags,
          summary:
            "One entity of an index's graph by citation id: description, the passages that mention it, its neighbours (Atrium extension)",
        },
      },
    );
}
