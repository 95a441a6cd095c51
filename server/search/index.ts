/**
 * The search family (graph search spec, area A): GraphRAG-style indexing and local/global graph search.
 * An instance wires its stores (SQL) into its services (queries, indexes) and those into its routes; the
 * indexing pipeline (indexing/) is what the index service and the `index` command run.
 */
import type { AppConfig } from "../config/index.ts";
import { defineFamily } from "../family.ts";
import { detailEnvelope } from "../http/errors.ts";
import { EmbeddingsClient } from "../models/embeddings.ts";
import { searchMigrations } from "./migrations/index.ts";
import { indexStreamRoutes } from "./routes/index-stream.ts";
import { searchRoutes } from "./routes/search.ts";
import { SearchIndexService } from "./services/indexes.ts";
import { SearchQueryService } from "./services/queries.ts";
import { SearchGraphStore } from "./stores/graph-store.ts";
import { SearchStore } from "./stores/search-store.ts";

/** The policy's embeddings endpoint ([search] embeddings_model + its base URL variable), if it names one. */
function embeddingsClient(config: AppConfig): EmbeddingsClient | undefined {
  const model = config.policy.settings.search?.embeddings_model;
  const baseUrl = config.policy.secrets.embeddingsBaseUrl;
  if (!model || !baseUrl) return undefined;
  return new EmbeddingsClient({ baseUrl, model, apiKey: config.policy.secrets.embeddingsApiKey });
}

export const searchFamily = defineFamily({
  name: "search",
  tag: {
    name: "search",
    description:
      "GraphRAG-style local and global search over a knowledge graph built from documents, with streaming answers and follow-up questions (docs/search.md).",
  },
  migrations: searchMigrations,
  // `GET /` is the search service's root probe (served by server/health.ts).
  paths: { prefixes: ["/search", "/generate_questions", "/monitor-debug"], exact: ["/"] },
  envelope: detailEnvelope,
  create: (ctx) => {
    const search = new SearchStore(ctx.store);
    const graph = new SearchGraphStore(ctx.store);
    const embeddings = embeddingsClient(ctx.config);
    const queries = new SearchQueryService({ search, graph }, ctx.models, embeddings);
    const indexes = new SearchIndexService(
      search,
      ctx.models,
      ctx.log.child({ family: "search" }),
      embeddings,
    );
    return { routes: searchRoutes({ queries, indexes }, ctx).use(indexStreamRoutes(indexes, ctx)) };
  },
});
