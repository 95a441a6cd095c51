/** The search family (graph search spec, area A): GraphRAG-style indexing and local/global graph search. */
import { defineFamily } from "../family.ts";
import { detailEnvelope } from "../http/errors.ts";
import { searchMigrations } from "./migrations/index.ts";
import { searchRoutes } from "./routes.ts";

export const searchFamily = defineFamily({
  name: "search",
  tag: {
    name: "search",
    description:
      "GraphRAG-style local and global search over a knowledge graph built from documents, with streaming answers and follow-up questions (specs/graph-search-and-agent-platform-api.md, area A).",
  },
  migrations: searchMigrations,
  // `GET /` is the search service's root probe (served by server/health.ts).
  paths: { prefixes: ["/search", "/generate_questions", "/monitor-debug"], exact: ["/"] },
  envelope: detailEnvelope,
  create: (ctx) => ({ routes: searchRoutes(ctx) }),
});
