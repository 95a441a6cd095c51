/**
 * The turns family (specs/turn-service-api.md): the recursive-language-model turn service. Its start hook
 * marks runs a crash left running as failed, discards their artifact candidates, and builds the sandbox
 * pool; once the server serves, the pool warms in the background (pyodide loads in its subprocesses, so
 * neither readiness nor the event loop waits). At shutdown, running turns fail with `server_stopping`
 * and the family waits a moment for them to commit before the database closes.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { defineFamily } from "../family.ts";
import { codeEnvelope } from "../http/errors.ts";
import { limitsFromPolicy } from "../sandbox/limits.ts";
import { defaultMaxInterpreters, SandboxPool } from "../sandbox/pool.ts";
import { assetRoutes } from "./assets-routes.ts";
import { filesRoutes } from "./files-routes.ts";
import { turnsMigrations } from "./migrations/index.ts";
import { TurnServices } from "./services.ts";
import { sessionRoutes } from "./sessions-routes.ts";
import { settingsRoutes } from "./settings-routes.ts";
import { skillsRoutes } from "./skills-routes.ts";

/** How long shutdown waits for running turns to commit their failure. */
const SETTLE_MS = 3000;

export const turnsFamily = defineFamily({
  name: "turns",
  tag: {
    name: "turns",
    description:
      "Recursive-language-model turns over SSE: the model writes Python that runs in a sandbox; sessions, attachments, artifacts, files, skills, settings and health (specs/turn-service-api.md).",
  },
  migrations: turnsMigrations,
  paths: {
    prefixes: [
      "/api/sessions",
      "/api/attachments",
      "/api/artifacts",
      "/api/files",
      "/api/volume",
      "/api/skills",
      "/api/runs",
      "/api/settings",
      // The liveness and readiness probes (server/health.ts) are the turn service's.
      "/health",
    ],
  },
  envelope: codeEnvelope,
  create: (ctx) => new TurnsInstance(ctx),
});

/** The turns family of one app: its services, and the sandbox pool they run turns in. */
class TurnsInstance {
  /** What the routes and runtime share (tests reach the pool, tracer and analytics through it). */
  readonly services: TurnServices;
  readonly routes;
  private started = false;
  private released = false;

  constructor(private readonly ctx: AppContext) {
    const services = new TurnServices(ctx);
    this.services = services;
    this.routes = new Elysia({ name: "atrium/turns" })
      .use(sessionRoutes(ctx, services))
      .use(assetRoutes(ctx, services))
      .use(filesRoutes(ctx, services))
      .use(skillsRoutes(ctx, services))
      .use(settingsRoutes(ctx, services));
  }

  async start() {
    const { ctx, services } = this;
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
    this.started = true;
    // Running turns fail with `server_stopping` as soon as shutdown begins, not after the drain.
    ctx.shutdown.addEventListener("abort", () => this.release(), { once: true });
  }

  /** Only a listening server warms (an app composed in a test that never runs a turn starts no pyodide). */
  serving() {
    this.services.warmSandbox();
  }

  async stop() {
    if (!this.started) return;
    this.release();
    await this.services.live.settled(SETTLE_MS);
  }

  /** Stops running turns, the sandbox pool and the tracer's buffer; idempotent. */
  private release() {
    if (this.released) return;
    this.released = true;
    const { services } = this;
    for (const live of services.live.all()) live.controller.abort("shutdown");
    services.pool?.close();
    services.tracer.flush();
  }
}
