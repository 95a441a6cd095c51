/**
 * The agents family (graph search spec, area B): agents, fleets, memory, chat sessions over HTTP and
 * chat over the WebSocket /v1/chat. Wires the stores, services and routes together.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { defineFamily } from "../family.ts";
import { detailEnvelope } from "../http/errors.ts";
import { AgentService } from "./agents-service.ts";
import { ChatService } from "./chat-service.ts";
import { ChatStore } from "./chat-store.ts";
import { MemoryService } from "./memory-service.ts";
import { MemoryStore } from "./memory-store.ts";
import migration1 from "./migrations/0001_agents.sql" with { type: "text" };
import { agentRoutes, fleetRoutes, memoryRoutes, sessionRoutes } from "./routes.ts";
import { SessionService } from "./sessions-service.ts";
import { AgentStore } from "./store.ts";
import { chatSocketRoute } from "./ws.ts";

/** Largest WebSocket frame accepted; larger ones are closed with 1009 by Bun (set on the server in app.ts). */
export const WS_MAX_FRAME_BYTES = 256 * 1024;

function agentsServices(ctx: AppContext) {
  const agentStore = new AgentStore(ctx.store);
  const agents = new AgentService(agentStore, ctx.models);
  const memory = new MemoryService(new MemoryStore(ctx.store), agentStore);
  const chatStore = new ChatStore(ctx.store);
  const chat = new ChatService(chatStore, agents, memory, ctx.models);
  return { agents, memory, chat, sessions: new SessionService(chatStore) };
}

export const agentsFamily = defineFamily({
  name: "agents",
  tag: {
    name: "agents",
    description:
      "Agents, fleets with coordination patterns, memory, and chat over the WebSocket /v1/chat (specs/graph-search-and-agent-platform-api.md, area B). The WebSocket protocol is described on GET /v1/chat/sessions.",
  },
  migrations: [{ version: 1, name: "agents", sql: migration1 }],
  paths: { prefixes: ["/v1"] },
  envelope: detailEnvelope,
  create(ctx) {
    const { agents, memory, chat, sessions } = agentsServices(ctx);
    return {
      routes: new Elysia({ name: "atrium/agents" })
        .use(agentRoutes(ctx, agents))
        .use(fleetRoutes(ctx, agents))
        .use(memoryRoutes(ctx, memory))
        .use(sessionRoutes(ctx, sessions))
        .use(chatSocketRoute(chat, ctx.identity as unknown as Elysia, ctx.log, ctx.shutdown)),
    };
  },
});
