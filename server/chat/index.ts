/**
 * The chat family (specs/chat-app-api.md): streaming chat on the pi agent runtime. Each app context gets
 * its own runtime host (a pool of live pi sessions), stopped with the family.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { Family } from "../family.ts";
import { catalogRoutes } from "./catalog-routes.ts";
import { chatMigrations } from "./migrations/index.ts";
import { chatRoutes } from "./routes.ts";
import { type ChatServices, createChatServices } from "./services/index.ts";

const running = new Map<AppContext, ChatServices>();

/** The services behind an app context's chat routes (tests reach the host through this). */
export function chatServicesOf(ctx: AppContext): ChatServices | undefined {
  return running.get(ctx);
}

export const chatFamily: Family = {
  name: "chat",
  tag: {
    name: "chat",
    description:
      "Streaming chat backend for the pi agent runtime: NDJSON turns, sessions, models, providers, commands, resources, settings, workspace and sandbox (specs/chat-app-api.md).",
  },
  migrations: chatMigrations,
  routes(ctx) {
    const services = createChatServices(ctx);
    running.set(ctx, services);
    return new Elysia({ name: "atrium/chat" })
      .use(chatRoutes(ctx, services))
      .use(catalogRoutes(ctx, services));
  },
  /** Called after the server stopped accepting requests: closes the sessions of the contexts shutting down. */
  async stop() {
    for (const [ctx, services] of running) {
      if (!ctx.shutdown.aborted) continue;
      await services.host.stop();
      running.delete(ctx);
    }
  },
};
