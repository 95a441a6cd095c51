/**
 * The chat family's home instance (homes.ts, routing.ts, instances.ts): composed over the app's context.
 * On when the instance is one of several: protected mode with APP_INSTANCE_URL set (every instance of a
 * group sets it: docs/deploy.md "Several instances"). A single instance takes no lease and routes
 * nothing, exactly as before; local mode is one user on one machine.
 * `start` records this instance's address (APP_INSTANCE_URL) for the others; `stop`, once the chat
 * sessions are closed, releases the homes this instance held so another takes them at once.
 */
import { Elysia } from "elysia";
import { resolvedIdentity } from "../../auth/identity.ts";
import type { AppContext } from "../../context.ts";
import type { ChatRuntimeHost } from "../runtime/host.ts";
import type { ChatRunStore } from "../stores/runs.ts";
import { Homes } from "./homes.ts";
import { InstanceRegistry, instanceOrigin } from "./instances.ts";
import { homeRouting } from "./routing.ts";

export interface ChatHomeDeps {
  host: Pick<ChatRuntimeHost, "closeOwner">;
  runs: Pick<ChatRunStore, "failRunning">;
  sandboxes: { stop(owner: string): Promise<void> };
}

export function chatHome(ctx: AppContext, deps: ChatHomeDeps) {
  const registry = new InstanceRegistry(ctx.database);
  const instance = ctx.instanceId;
  const configured = ctx.env.get("APP_INSTANCE_URL")?.trim();
  const homes = new Homes({
    leases: ctx.leases,
    registry,
    instance,
    onTakeover: async (owner) => {
      const failed = await deps.runs.failRunning(owner, "interrupted: its server instance stopped");
      if (failed) ctx.log.info("took over a user's home from a stopped instance", { runs_failed: failed });
    },
    onLost: async (owner) => {
      ctx.log.warn("another instance took over a user's home: closing their sessions here");
      await deps.host.closeOwner(owner);
      await deps.sandboxes.stop(owner);
    },
  });
  const enabled = ctx.config.mode.kind === "protected" && Boolean(configured);
  const routes = enabled
    ? homeRouting({ homes, instance, secret: ctx.config.auth.secret, identityOf: resolvedIdentity })
    : new Elysia({ name: "atrium/chat/home" });
  let registered = false;
  return {
    homes,
    routes,
    async start() {
      if (!enabled || !configured) return;
      const origin = instanceOrigin(configured);
      if ("error" in origin) throw new Error(origin.error);
      await registry.register(instance, origin.origin);
      registered = true;
    },
    async stop() {
      await homes.releaseAll();
      if (registered) await registry.unregister(instance);
    },
  };
}
