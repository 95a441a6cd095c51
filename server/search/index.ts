/** The search family (graph search spec, area A): GraphRAG-style local and global search. Routes arrive with its issue. */
import { Elysia } from "elysia";
import type { Family } from "../family.ts";

export const searchFamily: Family = {
  name: "search",
  tag: {
    name: "search",
    description:
      "GraphRAG-style local and global search over a knowledge graph built from documents, with streaming answers and follow-up questions (specs/graph-search-and-agent-platform-api.md, area A).",
  },
  migrations: [],
  routes: () => new Elysia({ name: "atrium/search" }),
};
