/**
 * The search family (graph search spec, area A): GraphRAG-style indexing and local/global graph search.
 * An instance wires its stores (SQL) into its services (queries, indexes) and those into its routes; the
 * indexing pipeline (indexing/) is what the index service and the `index` command run.
 */
import { defineFamily } from "../family.ts";
import { detailEnvelope } from "../http/errors.ts";
import { policyEmbeddings } from "../models/embeddings.ts";
import { DocumentParser, parseLimitsFromPolicy } from "./indexing/parser.ts";
import { searchMigrations } from "./migrations/index.ts";
import { indexStreamRoutes } from "./routes/index-stream.ts";
import { indexUploadRoutes } from "./routes/index-upload.ts";
import { searchRoutes } from "./routes/search.ts";
import { SearchIndexService } from "./services/indexes.ts";
import { SearchQueryService } from "./services/queries.ts";
import { SearchGraphStore } from "./stores/graph-store.ts";
import { SearchStore } from "./stores/search-store.ts";

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
    const embeddings = policyEmbeddings(ctx.config);
    // PDF and HTML are read in a bounded subprocess per document, never on the event loop.
    const parser = new DocumentParser(parseLimitsFromPolicy(ctx.config.policy.settings), {
      keepOut: [ctx.config.dataDir],
      uidBase: ctx.config.policy.settings.sandbox.uid_base,
    });
    const queries = new SearchQueryService({ search, graph }, ctx.models, embeddings);
    const indexes = new SearchIndexService(
      search,
      ctx.models,
      ctx.log.child({ family: "search" }),
      parser,
      embeddings,
    );
    const maxFileBytes = ctx.config.policy.settings.storage.max_upload_bytes;
    return {
      routes: searchRoutes({ queries, indexes }, ctx)
        .use(indexStreamRoutes(indexes, ctx))
        .use(indexUploadRoutes(indexes, parser, ctx, { maxFileBytes })),
      stop: async () => parser.close(),
    };
  },
});
