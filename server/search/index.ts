/**
 * The search family (graph search spec, area A): GraphRAG-style indexing and local/global graph search.
 * An instance builds its stores (SQL), then its services (queries, indexes, the document parser), then its
 * routes (each `(ctx, services)`), like every family; the indexing pipeline (indexing/) is what the index service and the `index` command run.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { defineFamily } from "../family.ts";
import { detailEnvelope } from "../http/errors.ts";
import { policyEmbeddings } from "../models/embeddings.ts";
import { DocumentParser, parseLimitsFromPolicy } from "./indexing/parser.ts";
import { searchMigrations } from "./migrations/index.ts";
import { graphRoutes } from "./routes/graph.ts";
import { indexStreamRoutes } from "./routes/index-stream.ts";
import { indexUploadRoutes } from "./routes/index-upload.ts";
import { searchRoutes } from "./routes/search.ts";
import { SearchGraphService } from "./services/graph.ts";
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
  create(ctx) {
    const stores = searchStores(ctx);
    const services = searchServices(ctx, stores);
    return {
      routes: searchFamilyRoutes(ctx, services),
      stop: async () => services.parser.close(),
    };
  },
});

/**
 * The SQL stores over the app's database port (app.db, or PostgreSQL from APP_DATABASE_URL); on SQLite
 * the port's own bun:sqlite connection is handed along for sqlite-vec.
 */
function searchStores(ctx: AppContext) {
  const sqlite = ctx.database.engine === "sqlite" ? ctx.db : undefined;
  return { search: new SearchStore(ctx.database, sqlite), graph: new SearchGraphStore(ctx.database) };
}

/** The services, each given only what it uses (the document parser is stopped with the family). */
function searchServices(ctx: AppContext, { search, graph }: ReturnType<typeof searchStores>) {
  const embeddings = policyEmbeddings(ctx.config);
  // PDF and HTML are read in a bounded subprocess per document, never on the event loop.
  const parser = new DocumentParser(parseLimitsFromPolicy(ctx.config.policy.settings), {
    keepOut: [ctx.config.dataDir],
    uidBase: ctx.config.policy.settings.sandbox.uid_base,
  });
  return {
    queries: new SearchQueryService({ search, graph }, ctx.models, embeddings),
    indexes: new SearchIndexService(
      search,
      ctx.models,
      ctx.log.child({ family: "search" }),
      parser,
      embeddings,
      ctx.leases,
    ),
    graph: new SearchGraphService(search, graph),
    parser,
    uploads: { maxFileBytes: ctx.config.policy.settings.storage.max_upload_bytes },
  };
}

/** The thin routes, each given the app's context and the services. */
function searchFamilyRoutes(ctx: AppContext, services: ReturnType<typeof searchServices>) {
  return new Elysia({ name: "atrium/search" })
    .use(searchRoutes(ctx, services))
    .use(indexStreamRoutes(ctx, services))
    .use(indexUploadRoutes(ctx, services))
    .use(graphRoutes(ctx, services));
}
