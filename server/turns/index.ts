/**
 * The turns family (docs/turns.md): the recursive-language-model turn service. One instance per app
 * builds its stores, then its runtime (sandbox pool, live runs, tracing, analytics), then its services,
 * each given only what it uses, then its thin routes (each `(ctx, services)`).
 *
 * Its start hook marks runs a crash left running as failed, discards their artifact candidates, and
 * builds the sandbox pool; once the server serves, the pool warms in the background (pyodide loads in
 * its subprocesses, so neither readiness nor the event loop waits). At shutdown, running turns fail with
 * `server_stopping` and the family waits a moment for them to commit before the database closes.
 */
import { type AnyElysia, Elysia } from "elysia";
import { policyFileToWrite } from "../config/builtin-policy.ts";
import type { AppContext } from "../context.ts";
import { defineFamily } from "../family.ts";
import { detectSandboxInBackground, sandboxReport } from "../sandbox/isolation.ts";
import { turnsMigrations } from "./migrations/index.ts";
import { assetRoutes } from "./routes/assets.ts";
import { turnsEnvelope } from "./routes/envelope.ts";
import { filesRoutes } from "./routes/files.ts";
import { turnSessionRoutes } from "./routes/sessions.ts";
import { settingsRoutes } from "./routes/settings.ts";
import { skillsRoutes } from "./routes/skills.ts";
import { turnRoutes } from "./routes/turns.ts";
import { TurnAnalytics } from "./runtime/analytics.ts";
import { LiveRuns } from "./runtime/live-run.ts";
import { TurnSandbox, turnSandboxOptions } from "./runtime/sandbox.ts";
import { TurnTracer } from "./runtime/tracing.ts";
import { TurnAssetService } from "./services/assets.ts";
import { TurnFileService } from "./services/files.ts";
import { TurnQuota } from "./services/quota.ts";
import { TurnSessionService } from "./services/sessions.ts";
import { TurnSettingsService } from "./services/settings.ts";
import { TurnSkillService } from "./services/skills.ts";
import { TurnInstances } from "./services/turn-instances.ts";
import { TurnService } from "./services/turn-start.ts";
import { TurnAssetStore } from "./stores/assets.ts";
import { TurnRunStore } from "./stores/runs.ts";
import { TurnSessionStore } from "./stores/sessions.ts";
import { TurnSpanStore } from "./stores/spans.ts";

/** How long shutdown waits for running turns to commit their failure. */
const SETTLE_MS = 3000;

export const turnsFamily = defineFamily({
  name: "turns",
  tag: {
    name: "turns",
    description:
      "Recursive-language-model turns over SSE: the model writes Python that runs in a sandbox; sessions, attachments, artifacts, files, skills, settings and health (docs/turns.md).",
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
  envelope: turnsEnvelope,
  create(ctx) {
    const stores = turnsStores(ctx);
    const runtime = turnsRuntime(ctx, stores);
    const services = turnsServices(ctx, stores, runtime);
    return new TurnsInstance(ctx, stores, runtime, services, turnsRoutes(ctx, services));
  },
});

/** The SQL stores over the app's database port (app.db, or PostgreSQL with APP_DATABASE_URL). */
function turnsStores(ctx: AppContext) {
  return {
    sessions: new TurnSessionStore(ctx.database),
    runs: new TurnRunStore(ctx.database),
    assets: new TurnAssetStore(ctx.database, ctx.config.dataDir),
    spans: new TurnSpanStore(ctx.database),
  };
}
type TurnsStores = ReturnType<typeof turnsStores>;

/** What runs below the services: the sandbox pool (built at start), live runs, tracing, analytics. */
function turnsRuntime(ctx: AppContext, stores: TurnsStores) {
  const { settings, secrets } = ctx.config.policy;
  const known = Object.values(secrets).filter((v): v is string => typeof v === "string");
  const live = new LiveRuns();
  return {
    sandbox: new TurnSandbox(),
    live,
    instances: new TurnInstances({
      runs: stores.runs,
      live,
      leases: ctx.leases,
      bus: ctx.bus,
      shared: ctx.database.engine === "postgres",
      log: ctx.log,
    }),
    tracer: new TurnTracer(stores.spans, settings.tracing, known, (error) =>
      ctx.log.warn("tracing spans were not written", { error: (error as Error).message }),
    ),
    analytics: new TurnAnalytics({
      enabled: settings.analytics.enabled,
      host: settings.analytics.host,
      token: secrets.analyticsToken,
      dataDir: ctx.config.dataDir,
      log: ctx.log,
    }),
  };
}
type TurnsRuntime = ReturnType<typeof turnsRuntime>;

/** The services, each given only what it uses (the policy's settings object is read per request). */
function turnsServices(ctx: AppContext, stores: TurnsStores, runtime: TurnsRuntime) {
  const { config, log } = ctx;
  const { settings, secrets } = config.policy;
  const { dataDir } = config;
  const { sessions, runs, assets } = stores;
  const { analytics } = runtime;
  const quota = new TurnQuota({ dataDir, assets, limitBytes: settings.storage.workspace_quota_bytes });
  const files = new TurnFileService({ dataDir, storage: settings.storage, quota });
  return {
    sessions: new TurnSessionService({ sessions, runs, analytics }),
    turns: new TurnService({
      ...stores,
      ...runtime,
      log,
      settings,
      quota,
      files,
      models: ctx.models,
      endpoint: secrets,
      rlm: settings.rlm,
      protectedMode: config.mode.kind === "protected",
      shutdown: ctx.shutdown,
      mcp: ctx.mcp,
    }),
    assets: new TurnAssetService({ assets, quota, analytics, storage: settings.storage }),
    files,
    skills: new TurnSkillService({ analytics }),
    settings: new TurnSettingsService(
      config.policy.path,
      policyFileToWrite(config.policy.path, dataDir),
      () => sandboxReport(runtime.sandbox.pool?.isolation),
      analytics,
    ),
  };
}

/** The thin routes, each given the app's context and the services. */
function turnsRoutes(ctx: AppContext, services: ReturnType<typeof turnsServices>) {
  return new Elysia({ name: "atrium/turns" })
    .use(turnSessionRoutes(ctx, services))
    .use(turnRoutes(ctx, services))
    .use(assetRoutes(ctx, services))
    .use(filesRoutes(ctx, services))
    .use(skillsRoutes(ctx, services))
    .use(settingsRoutes(ctx, services));
}

/** The turns family of one app: its runtime and services (tests reach the sandbox pool and tracer). */
class TurnsInstance {
  private started = false;
  private released = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly stores: TurnsStores,
    readonly runtime: TurnsRuntime,
    readonly services: ReturnType<typeof turnsServices>,
    readonly routes: AnyElysia,
  ) {}

  async start() {
    const { ctx, stores, runtime } = this;
    const failed = await runtime.instances.start();
    await stores.assets.discardOrphans();
    if (failed > 0) ctx.log.warn("runs interrupted by a restart were marked failed", { failed });
    // The jail probes run as child processes (started early by main.ts); the pool then finds them done.
    await detectSandboxInBackground();
    try {
      runtime.sandbox.start(turnSandboxOptions(ctx));
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
    this.runtime.sandbox.warm();
  }

  async stop() {
    if (!this.started) return;
    this.release();
    await this.runtime.live.settled(SETTLE_MS);
    await this.runtime.instances.stop();
    await this.runtime.tracer.close();
  }

  /** Stops running turns, the sandbox pool and the tracer's buffer; idempotent. */
  private release() {
    if (this.released) return;
    this.released = true;
    const { live, sandbox, tracer } = this.runtime;
    for (const run of live.all()) run.controller.abort("shutdown");
    sandbox.close();
    void tracer.flush();
  }
}
