/** The search family (graph search spec, area A): GraphRAG-style indexing and local/global graph search. */
import type { Family } from "../family.ts";
import { searchMigrations } from "./migrations/index.ts";
import { searchRoutes } from "./routes.ts";

export const searchFamily: Family = {
  name: "search",
  tag: {
    name: "search",
    description:
      "GraphRAG-style local and global search over a knowledge graph built from documents, with streaming answers and follow-up questions (specs/graph-search-and-agent-platform-api.md, area A).",
  },
  migrations: searchMigrations,
  routes: searchRoutes,
};
