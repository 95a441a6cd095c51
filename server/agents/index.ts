/** The agents family (graph search spec, area B): agents, fleets, memory, WebSocket chat. Routes arrive with its issue. */
import { Elysia } from "elysia";
import type { Family } from "../family.ts";

export const agentsFamily: Family = {
  name: "agents",
  tag: {
    name: "agents",
    description:
      "Agents, fleets with coordination patterns, memory, and chat over the WebSocket /v1/chat (specs/graph-search-and-agent-platform-api.md, area B).",
  },
  migrations: [],
  routes: () => new Elysia({ name: "atrium/agents" }),
};
