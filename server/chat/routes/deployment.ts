/**
 * The chat family's routes for per-user resources beside the chat itself: the agent workspace, the
 * sandbox (preview URLs) and the sandbox provider's webhook. One plugin, so the family mounts them with
 * one line; each part keeps its own file.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import type { SandboxProvider } from "../../sandbox/users/provider.ts";
import type { SandboxKeyService } from "../services/sandbox-keys.ts";
import { sandboxRoutes } from "./sandbox.ts";
import { sandboxSettingsRoutes } from "./sandbox-settings.ts";
import { webhookRoutes } from "./webhooks.ts";
import { workspaceRoutes } from "./workspace.ts";

export function deploymentRoutes(ctx: AppContext, sandboxes: SandboxProvider, keys: SandboxKeyService) {
  return new Elysia({ name: "atrium/chat/deployment" })
    .use(webhookRoutes(ctx, sandboxes))
    .use(workspaceRoutes(ctx))
    .use(sandboxRoutes(ctx, sandboxes))
    .use(sandboxSettingsRoutes(ctx, sandboxes, keys));
}
