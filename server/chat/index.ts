/**
 * The chat family (specs/chat-app-api.md): streaming chat on the pi agent runtime. Each instance has its
 * own services and runtime host (a pool of live pi sessions), stopped with the instance.
 */
import { Elysia } from "elysia";
import { defineFamily } from "../family.ts";
import { messageEnvelope } from "../http/errors.ts";
import { catalogRoutes } from "./catalog-routes.ts";
import { chatMigrations } from "./migrations/index.ts";
import { chatRoutes } from "./routes.ts";
import { createChatServices } from "./services/index.ts";

export const chatFamily = defineFamily({
  name: "chat",
  tag: {
    name: "chat",
    description:
      "Streaming chat backend for the pi agent runtime: NDJSON turns, sessions, models, providers, commands, resources, settings, workspace and sandbox (specs/chat-app-api.md).",
  },
  migrations: chatMigrations,
  paths: {
    prefixes: [
      "/api/chat",
      "/api/workspace",
      "/api/sandbox",
      "/api/webhooks",
      "/api/auth",
      "/api/health",
      "/api/post-chat",
      "/api/attach",
    ],
  },
  envelope: messageEnvelope,
  create(ctx) {
    const services = createChatServices(ctx);
    return {
      /** The services behind the routes (tests reach the runtime host through them). */
      services,
      routes: new Elysia({ name: "atrium/chat" })
        .use(chatRoutes(ctx, services))
        .use(catalogRoutes(ctx, services)),
      /** Closes the live pi sessions. */
      stop: () => services.host.stop(),
    };
  },
});
