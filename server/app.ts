/**
 * Composes the app over a context: one instance of each family, and the Elysia app with the
 * cross-cutting plugins first (errors, the local surface guard, body limit, readiness gate, identity,
 * body types), then health, docs, the UI, and each family's routes. The same `App` is driven by the
 * server (lifecycle.ts: listen, compose, serving, close) and by tests (`elysia.handle()` without
 * listening, then compose and close), so families start and stop the same way in both.
 */
import { type AnyElysia, Elysia } from "elysia";
import { agentsFamily, WS_MAX_FRAME_BYTES } from "./agents/index.ts";
import { managedAuthProxy } from "./auth/managed.ts";
import { authMigrations } from "./auth/migrations/index.ts";
import { authRoutes } from "./auth/routes.ts";
import { tokenRoutes } from "./auth/token-routes.ts";
import { chatFamily } from "./chat/index.ts";
import { type AppContext, startupDatabases } from "./context.ts";
import type { FamilyInstance } from "./family.ts";
import { healthRoutes } from "./health.ts";
import { requestBodies } from "./http/bodies.ts";
import { docs } from "./http/docs.ts";
import { errorHandling } from "./http/error-handler.ts";
import { pathOwners } from "./http/families.ts";
import { bodyLimit } from "./http/limits.ts";
import { readinessGate } from "./http/readiness.ts";
import { surfaceGuard } from "./http/surface.ts";
import { atriumMcp, MCP_TAG } from "./mcp/index.ts";
import { mcpClientMigrations } from "./mcp-client/migrations/index.ts";
import { openaiEnvelope } from "./openai/errors.ts";
import { atriumOpenAi, OPENAI_PATHS, OPENAI_TAG } from "./openai/index.ts";
import { sandboxMigrations } from "./sandbox/users/migrations/index.ts";
import { searchFamily } from "./search/index.ts";
import type { MigrationSet } from "./storage/migrate.ts";
import { coreMigrations } from "./storage/migrations/index.ts";
import { migrateAtStartup } from "./storage/startup-migrations.ts";
import { turnsFamily } from "./turns/index.ts";
import { webRoutes } from "./web.ts";
import { migrateOwnerFolders } from "./workspace/migrate-folders.ts";

/** Every family, in mounting order (docs tags follow it; stopping goes the other way). */
export const FAMILIES = [chatFamily, turnsFamily, searchFamily, agentsFamily] as const;

type Declared = (typeof FAMILIES)[number];
export type FamilyName = Declared["name"];
/** Each family's instance type by name: what `App.family(name)` returns. */
export type FamilyInstances = { [F in Declared as F["name"]]: ReturnType<F["create"]> };

export interface AppOptions {
  /** Extra plugins mounted after the families (tests use this for probe routes). */
  plugins?: ((ctx: AppContext) => AnyElysia)[];
  /**
   * false leaves out the Host/Origin guard. Only bench/http.ts sets it, to measure what the guard costs;
   * a server started from the command line always has it.
   */
  surfaceGuard?: boolean;
}

export interface App {
  /** The Elysia app: `listen()` in lifecycle.ts, `handle()` in tests. */
  elysia: AnyElysia;
  /** The instance of a family in this app. */
  family<N extends FamilyName>(name: N): FamilyInstances[N];
  /**
   * Finishes startup: applies pending migrations, starts each family's runtime, then opens the gate.
   * Until it resolves, only the health probes answer.
   */
  compose(): Promise<void>;
  /** Background warm-up once a listening server is composed (readiness does not wait for it). */
  serving(): void;
  /** Stops the families (last mounted first), then closes the database. Runs once; later calls wait for it. */
  close(): Promise<void>;
}

export function createApp(ctx: AppContext, options: AppOptions = {}): App {
  // An access token's scope is the family that owns the path (auth/scopes.ts).
  // The OpenAI-compatible paths sit inside the agents family's /v1 and need no scope there: each model
  // kind checks its own (server/openai/kinds.ts). Declared first, so they win over the /v1 prefix.
  ctx.scopes.learn([{ name: "openai", paths: OPENAI_PATHS }, ...FAMILIES]);
  const instances = Object.fromEntries(FAMILIES.map((f) => [f.name, f.create(ctx)])) as FamilyInstances;
  const mounted: FamilyInstance[] = FAMILIES.map((f) => instances[f.name]);
  // A route's declared envelope (routePolicy) wins over its family's; the OpenAI-compatible paths are
  // listed before the families, so they win over the agents family's /v1 prefix.
  const familyEnvelope = pathOwners([
    { paths: OPENAI_PATHS, value: openaiEnvelope },
    ...FAMILIES.map((f) => ({ paths: f.paths, value: f.envelope })),
  ]);
  const envelopeOf = (method: string, path: string) =>
    ctx.routePolicies.of(method, path).envelope ?? familyEnvelope(path);

  // Bun applies one WebSocket frame limit to the whole server: larger frames are closed with 1009.
  let app = new Elysia({ name: "atrium", websocket: { maxPayloadLength: WS_MAX_FRAME_BYTES } }).use(
    errorHandling(ctx.log, envelopeOf),
  ) as AnyElysia;
  if (options.surfaceGuard !== false) {
    const { host, publicOrigins } = ctx.config;
    app = app.use(surfaceGuard({ host, publicOrigins }, ctx.routePolicies, () => app.server?.port));
  }
  app = app
    .use(bodyLimit(ctx.config.bodyLimitBytes))
    .use(readinessGate(ctx.readiness))
    .use(ctx.identity)
    // A response stream of a signed-in caller ends when their credential is revoked (live-connections.ts).
    .onAfterHandle({ as: "global" }, ({ response, identity }) =>
      response instanceof Response && identity && identity.kind !== "local"
        ? ctx.connections.holdStream(response, identity)
        : undefined,
    )
    .use(requestBodies(ctx.routePolicies))
    .use(healthRoutes(ctx))
    .use(docs([...FAMILIES.map((f) => f.tag), MCP_TAG, OPENAI_TAG], ctx.routePolicies, () => app))
    .use(webRoutes()) as AnyElysia;
  // Access tokens belong to a signed-in user: protected mode only (local mode needs none on loopback).
  if (ctx.config.mode.kind === "protected") app = app.use(tokenRoutes(ctx.tokens, ctx.identity));
  // /api/auth/*: the managed service's when there is one, else session auth's (APP_AUTH_SECRET).
  const managedAuthUrl = ctx.config.auth.managedAuthUrl;
  if (managedAuthUrl) app = app.use(managedAuthProxy(managedAuthUrl));
  else if (ctx.auth)
    app = app.use(authRoutes({ auth: ctx.auth, identity: ctx.identity, proxies: ctx.proxies }));
  for (const family of mounted) app = app.use(family.routes);
  // Atrium as an MCP server: its tools call the families' routes through this app, in process.
  const mcp = atriumMcp(ctx, (request) => app.handle(request));
  app = app.use(mcp.routes);
  // The OpenAI-compatible endpoint: provider models directly, the other kinds through the families' routes.
  // Provider models take the caller's own keys from Settings → Providers (the chat family's store).
  const storedKeys = (owner: string) => instances.chat.services.catalogs.storedKeys(owner);
  app = app.use(atriumOpenAi(ctx, (request) => app.handle(request), { storedKeys }).routes);
  for (const plugin of options.plugins ?? []) app = app.use(plugin(ctx));
  // Public routes, body types, origins and envelopes, as each route declares them (http/route-policy.ts).
  ctx.routePolicies.learn(app.routes);

  let closing: Promise<void> | undefined;
  return {
    elysia: app,
    family: (name) => instances[name],
    async compose() {
      // Managed profiles never migrate at startup: a database behind the head stops it (`atrium migrate`).
      await migrateAtStartup(startupDatabases(ctx), migrationSets());
      // Per-owner folders named by earlier encodings move to today's names before any family reads them.
      await migrateOwnerFolders(ctx);
      // The leases table exists now: this instance's leases are renewed while it runs.
      ctx.leases.start();
      for (const family of mounted) await family.start?.();
      ctx.readiness.markComposed();
    },
    serving() {
      for (const family of mounted) family.serving?.();
    },
    close() {
      closing ??= (async () => {
        await mcp.close();
        await ctx.mcp.close();
        for (const family of [...mounted].reverse()) await family.stop?.();
        ctx.connections.close();
        ctx.leases.stop();
        await ctx.bus.close();
        // On SQLite the port shares ctx.db's connection; on PostgreSQL it is its own pool (and no ctx.db).
        if (ctx.database.engine === "postgres") await ctx.database.close();
        ctx.db?.close();
      })();
      return closing;
    },
  };
}

/** The migration sets of the core tables and of each family (the index CLI applies them too). */
export function migrationSets(): MigrationSet[] {
  return [
    coreMigrations,
    authMigrations,
    sandboxMigrations,
    mcpClientMigrations,
    ...FAMILIES.map((f) => ({ scope: f.name, migrations: f.migrations })),
  ];
}
