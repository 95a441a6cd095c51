/**
 * The chat family's routes for per-user resources beside the chat itself: the sandbox provider's
 * webhook and the agent workspace (and, as they land, the sandbox routes). One plugin, so the family mounts them
 * with one line; each part keeps its own folder.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { SandboxRegistry } from "../../sandbox/users/registry.ts";
import { webhookRoutes } from "./webhooks.ts";
import { workspaceRoutes } from "./workspace.ts";

export function deploymentRoutes(ctx: AppContext) {
  const registry = new SandboxRegistry(ctx.store);
  return new Elysia({ name: "atrium/chat/deployment" })
    .use(webhookRoutes(ctx, registry))
    .use(workspaceRoutes(ctx));
}
