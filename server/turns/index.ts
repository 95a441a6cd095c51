/**
 * The turns family (docs/turns.md): the recursive-language-model turn service. One instance
 * per app wires its stores, then its runtime (sandbox pool, live runs, tracing, analytics), then its
 * services, each given only what it uses, then its thin routes.
 *
 * Its start hook marks runs a crash left running as failed, discards their artifact candidates, and
 * builds the sandbox pool; once the server serves, the pool warms in the background (pyodide loads in
 * its subprocesses, so neither readiness nor the event loop waits). At shutdown, running turns fail with
 * `server_stopping` and the family waits a moment for them to commit before the database closes.
 */
import { Elysia } from "elysia";
import { policyFileToWrite } from "../config/builtin-policy.ts";
import type { AppContext } from "../context.ts";
import { defineFamily } from "../family.ts";
import { detectSandboxInBackground, sandboxReport } from "../sandbox/isolation.ts";
import { ownerFolders } from "../workspace/owner-folders.ts";
import { turnsMigrations } from "./migrations/index.ts";
import { assetRoutes } from "./routes/assets.ts";
import { turnsEnvelope } from "./routes/envelope.ts";
import { filesRoutes } from "./routes/files.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { settingsRoutes } from "./routes/settings.ts";
import { skillsRoutes } from "./routes/skills.ts";
import { turnRoutes } from "./routes/turns.ts";
import { TurnAnalytics } from "./runtime/analytics.ts";
import { LiveRuns } from "./runtime/live-run.ts";
import { TurnSandbox, turnSandboxOptions } from "./runtime/sandbox.ts";
import { TurnTracer } from "./runtime/tracing.ts";
import { TurnAssetService } from "./services/assets.ts";
import { ownerFiles, TurnFileService } from "./services/files.ts";
import { promoteMemories } from "./services/memories.ts";
import { TurnQuota } from "./services/quota.ts";
import { TurnSessionService } from "./services/sessions.ts";
import { TurnSettingsService } from "./services/settings.ts";
import { turnModel } from "./services/turn-model.ts";
import { TurnOpener } from "./services/turn-opener.ts";
import { prepareTurn, type TurnPreparationDeps } from "./services/turn-preparation.ts";
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
  create: (ctx) => new TurnsInstance(ctx),
});

/** The turns family of one app. Tests reach its sandbox, tracer and analytics. */
class TurnsInstance {
  readonly sandbox = new TurnSandbox();
  readonly tracer: TurnTracer;
  readonly analytics: TurnAnalytics;
  readonly routes;
  private readonly runs: TurnRunStore;
  private readonly assets: TurnAssetStore;
  private readonly live = new LiveRuns();
  private started = false;
  private released = false;

  constructor(private readonly ctx: AppContext) {
    const { config, log } = ctx;
    const { settings, secrets } = config.policy;
    const dataDir = config.dataDir;

    const sessions = new TurnSessionStore(ctx.store);
    const runs = new TurnRunStore(ctx.store);
    const assets = new TurnAssetStore(ctx.store, dataDir);
    this.runs = runs;
    this.assets = assets;

    const known = Object.values(secrets).filter((v): v is string => typeof v === "string");
    const tracer = new TurnTracer(new TurnSpanStore(ctx.store), settings.tracing, known);
    const analytics = new TurnAnalytics({
      enabled: settings.analytics.enabled,
      host: settings.analytics.host,
      token: secrets.analyticsToken,
      dataDir,
      log,
    });
    this.tracer = tracer;
    this.analytics = analytics;
    const { live, sandbox } = this;

    // The whole workspace folder: what the chat agent's shell and the user's sandbox write counts too.
    const quota = new TurnQuota(
      (owner) => ownerFolders(dataDir, owner).workspace,
      (owner) => assets.bytesUsed(owner),
      settings.storage.workspace_quota_bytes,
    );
    const fileDeps = { dataDir, storage: settings.storage, quota };
    const files = (owner: string) => ownerFiles(fileDeps, owner);
    const preparation: TurnPreparationDeps = {
      sessions,
      runs,
      live,
      assets,
      tracer,
      analytics,
      log,
      settings,
      sandbox,
      quota,
      files,
      models: ctx.models,
      protectedMode: config.mode.kind === "protected",
      shutdown: ctx.shutdown,
      mcp: ctx.mcp,
      turnModel: () => turnModel({ models: ctx.models, model: settings.model, endpoint: secrets }),
      rlm: settings.rlm,
      promoteMemories: (owner, memories) => promoteMemories({ files, log }, owner, memories),
    };
    const opener = new TurnOpener({
      settings,
      analytics,
      log,
      prepare: (submission, timedOut, line) => prepareTurn(preparation, submission, timedOut, line),
    });
    const settingsService = new TurnSettingsService(
      config.policy.path,
      policyFileToWrite(config.policy.path, dataDir),
      () => sandboxReport(sandbox.pool?.isolation),
      analytics,
    );

    this.routes = new Elysia({ name: "atrium/turns" })
      .use(sessionRoutes(ctx, new TurnSessionService({ sessions, runs, analytics })))
      .use(turnRoutes(ctx, opener, { runs, live, analytics }))
      .use(assetRoutes(ctx, new TurnAssetService({ assets, quota, analytics, storage: settings.storage })))
      .use(filesRoutes(ctx, new TurnFileService(fileDeps)))
      .use(skillsRoutes(ctx, analytics))
      .use(settingsRoutes(ctx, settingsService));
  }

  async start() {
    const { ctx } = this;
    const failed = this.runs.failInterrupted();
    this.assets.discardOrphans();
    if (failed > 0) ctx.log.warn("runs interrupted by a restart were marked failed", { failed });
    // The jail probes run as child processes (started early by main.ts); the pool then finds them done.
    await detectSandboxInBackground();
    try {
      this.sandbox.start(turnSandboxOptions(ctx));
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
    this.sandbox.warm();
  }

  async stop() {
    if (!this.started) return;
    this.release();
    await this.live.settled(SETTLE_MS);
    this.tracer.close();
  }

  /** Stops running turns, the sandbox pool and the tracer's buffer; idempotent. */
  private release() {
    if (this.released) return;
    this.released = true;
    for (const live of this.live.all()) live.controller.abort("shutdown");
    this.sandbox.close();
    this.tracer.flush();
  }
}
