/**
 * The turns family (specs/turn-service-api.md): the recursive-language-model turn service. Its start hook
 * marks runs a crash left running as failed, discards their artifact candidates, and builds the sandbox
 * pool; once the server serves, the pool warms in the background (pyodide loads in its subprocesses, so
 * neither readiness nor the event loop waits). At shutdown, running turns fail with `server_stopping`
 * and the family waits a moment for them to commit before the database closes.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { Family } from "../family.ts";
import { limitsFromPolicy } from "../sandbox/limits.ts";
import { defaultMaxInterpreters, SandboxPool } from "../sandbox/pool.ts";
import { assetRoutes } from "./assets-routes.ts";
import { filesRoutes } from "./files-routes.ts";
import { turnsMigrations } from "./migrations/index.ts";
import { TurnServices } from "./services.ts";
import { sessionRoutes } from "./sessions-routes.ts";
import { settingsRoutes } from "./settings-routes.ts";
import { skillsRoutes } from "./skills-routes.ts";

const byContext = new WeakMap<AppContext, TurnServices>();

/** The family's services for an app (tests stop the sandbox pool of their apps with it). */
export function servicesOf(ctx: AppContext): TurnServices {
  let services = byContext.get(ctx);
  if (!services) {
    services = new TurnServices(ctx);
    byContext.set(ctx, services);
  }
  return services;
}

const started = new Set<TurnServices>();
/** How long shutdown waits for running turns to commit their failure. */
const SETTLE_MS = 3000;

export const turnsFamily: Family = {
  name: "turns",
  tag: {
    name: "turns",
    description:
      "Recursive-language-model turns over SSE: the model writes Python that runs in a sandbox; sessions, attachments, artifacts, files, skills, settings and health (specs/turn-service-api.md).",
  },
  migrations: turnsMigrations,
  routes: (ctx) => {
    const services = servicesOf(ctx);
    return new Elysia({ name: "atrium/turns" })
      .use(sessionRoutes(ctx, services))
      .use(assetRoutes(ctx, services))
      .use(filesRoutes(ctx, services))
      .use(skillsRoutes(ctx, services))
      .use(settingsRoutes(ctx, services));
  },
  async start(ctx) {
    const services = servicesOf(ctx);
    const failed = services.store.failInterruptedRuns();
    services.assets.discardOrphans();
    if (failed > 0) ctx.log.warn("runs interrupted by a restart were marked failed", { failed });
    const warm = Number(ctx.env.get("APP_SANDBOX_WARM") ?? 1);
    const { runtime, rlm } = services.settings;
    try {
      services.pool = new SandboxPool({
        warm: Number.isInteger(warm) && warm >= 0 ? warm : 1,
        max: runtime.max_interpreters || defaultMaxInterpreters(),
        reservedForChildren: rlm.recursion_enabled ? 1 : 0,
        startTimeoutMs: runtime.sandbox_start_timeout_seconds * 1000,
        keepOut: [ctx.config.dataDir],
        limits: limitsFromPolicy(ctx.config.policy.settings.sandbox),
      });
    } catch (error) {
      // The rest of the server still serves; turns answer "Turn is unavailable" until this is fixed.
      ctx.log.error("the Python sandbox cannot start; turns are unavailable", {
        error: (error as Error).message,
      });
    }
    started.add(services);
    ctx.shutdown.addEventListener("abort", () => stopServices(services), { once: true });
  },
  // Only a listening server warms (an app composed in a test that never runs a turn starts no pyodide).
  serving(ctx) {
    servicesOf(ctx).warmSandbox();
  },
  async stop() {
    const stopping = [...started];
    for (const services of stopping) stopServices(services);
    await Promise.all(stopping.map((services) => services.live.settled(SETTLE_MS)));
  },
};

export function stopServices(services: TurnServices) {
  for (const live of services.live.all()) live.controller.abort("shutdown");
  services.pool?.close();
  services.tracer.flush();
  started.delete(services);
}
