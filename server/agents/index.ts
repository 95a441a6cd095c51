/**
 * The agents family (graph search spec, area B): agents, fleets, memory, chat sessions over HTTP and
 * chat over the WebSocket /v1/chat. An instance builds its stores, then its services, then its routes
 * (each `(ctx, services)`), like every family.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { defineFamily } from "../family.ts";
import { detailEnvelope } from "../http/errors.ts";
import { agentsMigrations } from "./migrations/index.ts";
import { agentRoutes } from "./routes/agents.ts";
import { chatSocketRoutes } from "./routes/chat-socket.ts";
import { fleetRoutes } from "./routes/fleets.ts";
import { memoryRoutes } from "./routes/memory.ts";
import { agentMessageRoutes } from "./routes/messages.ts";
import { agentSessionRoutes } from "./routes/sessions.ts";
import { AgentService } from "./services/agents.ts";
import { AgentChatService } from "./services/chat.ts";
import { FleetService } from "./services/fleets.ts";
import { MemoryService } from "./services/memory.ts";
import { AgentSessionService } from "./services/sessions.ts";
import { AgentStore } from "./stores/agents.ts";
import { AgentChatStore } from "./stores/chat.ts";
import { FleetStore } from "./stores/fleets.ts";
import { MemoryStore } from "./stores/memory.ts";

/** Largest WebSocket frame accepted; larger ones are closed with 1009 by Bun (set on the server in app.ts). */
export const WS_MAX_FRAME_BYTES = 256 * 1024;

/** The SQL stores over the app's database. */
function agentsStores(ctx: AppContext) {
  return {
    agents: new AgentStore(ctx.database),
    fleets: new FleetStore(ctx.database),
    chat: new AgentChatStore(ctx.database),
    memory: new MemoryStore(ctx.database),
  };
}

/** The services, each given only what it uses. */
function agentsServices(ctx: AppContext, stores: ReturnType<typeof agentsStores>) {
  const { agents, fleets, chat } = stores;
  const memory = new MemoryService({ memory: stores.memory, agents, fleets });
  return {
    agents: new AgentService({ agents, fleets, models: ctx.models }),
    fleets: new FleetService({ fleets, agents }),
    memory,
    chat: new AgentChatService({ chat, agents, fleets, memory, models: ctx.models, mcp: ctx.mcp }),
    sessions: new AgentSessionService({ chat }),
  };
}

export const agentsFamily = defineFamily({
  name: "agents",
  tag: {
    name: "agents",
    description:
      "Agents, fleets with coordination patterns, memory, and chat over the WebSocket /v1/chat (docs/agents.md). The WebSocket protocol is described on GET /v1/chat/sessions.",
  },
  migrations: agentsMigrations,
  paths: { prefixes: ["/v1"] },
  envelope: detailEnvelope,
  create(ctx) {
    const stores = agentsStores(ctx);
    const services = agentsServices(ctx, stores);
    return { routes: agentsRoutes(ctx, services) };
  },
});

/** The thin routes, each given the app's context and the services. */
function agentsRoutes(ctx: AppContext, services: ReturnType<typeof agentsServices>) {
  return new Elysia({ name: "atrium/agents" })
    .use(agentRoutes(ctx, services))
    .use(fleetRoutes(ctx, services))
    .use(memoryRoutes(ctx, services))
    .use(agentSessionRoutes(ctx, services))
    .use(agentMessageRoutes(ctx, services))
    .use(chatSocketRoutes(ctx, services));
}
