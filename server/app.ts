/**
 * Composes the Elysia app: cross-cutting plugins first (errors, the local surface guard, body limit,
 * readiness gate, identity, body types), then health, docs, the UI, and one plugin per family.
 * Importable by tests, which call `app.handle()` without listening.
 */
import { type AnyElysia, Elysia } from "elysia";
import { agentsFamily, WS_MAX_FRAME_BYTES } from "./agents/index.ts";
import { chatFamily } from "./chat/index.ts";
import type { AppContext } from "./context.ts";
import type { Family } from "./family.ts";
import { requestBodies, UploadRoutes } from "./http/bodies.ts";
import { docs } from "./http/docs.ts";
import { errorHandling } from "./http/error-handler.ts";
import { healthRoutes } from "./http/health.ts";
import { bodyLimit } from "./http/limits.ts";
import { readinessGate } from "./http/readiness.ts";
import { surfaceGuard } from "./http/surface.ts";
import { searchFamily } from "./search/index.ts";
import { type MigrationSet, migrate } from "./storage/migrate.ts";
import { coreMigrations } from "./storage/migrations/index.ts";
import { turnsFamily } from "./turns/index.ts";
import { webRoutes } from "./web.ts";
import { migrateOwnerFolders } from "./workspace/migrate-folders.ts";

export const FAMILIES: Family[] = [chatFamily, turnsFamily, searchFamily, agentsFamily];

export interface AppOptions {
  families?: Family[];
  /** Extra plugins mounted after the families (tests use this for probe routes). */
  plugins?: ((ctx: AppContext) => AnyElysia)[];
  /**
   * false leaves out the Host/Origin guard. Only bench/http.ts sets it, to measure what the guard costs;
   * a server started from the command line always has it.
   */
  surfaceGuard?: boolean;
}

export function createApp(ctx: AppContext, options: AppOptions = {}) {
  const families = options.families ?? FAMILIES;
  // Bun applies one WebSocket frame limit to the whole server: larger frames are closed with 1009.
  const uploads = new UploadRoutes();
  let app = new Elysia({ name: "atrium", websocket: { maxPayloadLength: WS_MAX_FRAME_BYTES } }).use(
    errorHandling(ctx.log),
  ) as AnyElysia;
  if (options.surfaceGuard !== false) {
    const { host, publicOrigins } = ctx.config;
    app = app.use(surfaceGuard({ host, publicOrigins }, () => app.server?.port));
  }
  app = app
    .use(bodyLimit(ctx.config.bodyLimitBytes))
    .use(readinessGate(ctx.readiness))
    .use(ctx.identity)
    .use(requestBodies(uploads))
    .use(healthRoutes(ctx))
    .use(docs(families, uploads))
    .use(webRoutes()) as AnyElysia;
  for (const family of families) app = app.use(family.routes(ctx));
  for (const plugin of options.plugins ?? []) app = app.use(plugin(ctx));
  uploads.learn(app.routes);
  return app;
}

export function migrationSets(families: Family[] = FAMILIES): MigrationSet[] {
  return [coreMigrations, ...families.map((f) => ({ scope: f.name, migrations: f.migrations }))];
}

/**
 * Finishes startup: applies pending migrations, starts each family's runtime, then opens the gate.
 * Until it resolves, only the health probes answer.
 */
export async function compose(ctx: AppContext, families: Family[] = FAMILIES): Promise<void> {
  const applied = migrate(ctx.db, migrationSets(families));
  if (applied.length > 0) ctx.log.info("migrations applied", { applied });
  migrateOwnerFolders(ctx);
  for (const family of families) await family.start?.(ctx);
  ctx.readiness.markComposed();
}
