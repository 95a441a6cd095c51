/**
 * What every family receives: configuration, the database and store helper, the model layer, the
 * logger, readiness, the identity plugin, and the shutdown signal that ends long-lived streams.
 */
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import { AccessTokens, accessTokenResolver } from "./auth/access-tokens.ts";
import { BearerGuesses } from "./auth/bearer-guesses.ts";
import { type CredentialResolver, identityPlugin } from "./auth/identity.ts";
import { LimitStore } from "./auth/limit-store.ts";
import { LiveConnections } from "./auth/live-connections.ts";
import { managedResolver } from "./auth/managed.ts";
import { PasswordQueue } from "./auth/password-queue.ts";
import { ProxyTrust } from "./auth/proxies.ts";
import { ScopeRules } from "./auth/scopes.ts";
import { SessionAuth } from "./auth/session-auth.ts";
import { sessionResolver } from "./auth/session-resolver.ts";
import type { EnvSource } from "./config/env.ts";
import type { AppConfig } from "./config/index.ts";
import { outboundRule } from "./http/outbound/rule.ts";
import { Readiness } from "./http/readiness.ts";
import { RoutePolicies } from "./http/route-policy.ts";
import { newId } from "./lib/ids.ts";
import type { Logger } from "./log.ts";
import { McpClients } from "./mcp-client/clients.ts";
import { adminServers } from "./mcp-client/servers.ts";
import { ModelService } from "./models/service.ts";
import type { SignalBus } from "./storage/bus/bus.ts";
import { MemoryBus } from "./storage/bus/memory.ts";
import { PostgresBus } from "./storage/bus/postgres.ts";
import { openDatabase } from "./storage/database.ts";
import { openDb } from "./storage/db/open.ts";
import type { Db } from "./storage/db/port.ts";
import { sqlitePort } from "./storage/db/sqlite.ts";
import { DEFAULT_LEASE_MS, Leases } from "./storage/leases.ts";
import type { StartupDatabases } from "./storage/startup-migrations.ts";

export interface AppContext {
  config: AppConfig;
  env: EnvSource;
  /**
   * app.db's bun:sqlite connection (sqlite-vec loads into it), on the embedded engine only: with a
   * PostgreSQL URL no app.db is opened or created (docs/database.md).
   */
  db?: Database;
  /**
   * The database port (storage/db/): app.db's connection through the asynchronous port, or PostgreSQL
   * when the policy's APP_DATABASE_URL names one. Every store uses it.
   */
  database: Db;
  models: ModelService;
  log: Logger;
  readiness: Readiness;
  /** Session auth (accounts, sessions, invites, CSRF tokens), when `APP_AUTH_SECRET` is set. */
  auth?: SessionAuth;
  /** Personal access tokens (`atr_…`): created, listed and revoked by their owner; accepted as bearers. */
  tokens: AccessTokens;
  /** Which scope of an access token each route needs; createApp teaches it the families' paths. */
  scopes: ScopeRules;
  /**
   * What each route declares of the shared layers (public, body types, any origin, error envelope):
   * createApp teaches it the composed app's routes (http/route-policy.ts).
   */
  routePolicies: RoutePolicies;
  /** Attempt limits kept in the database (sign-in, workspace reindex): shared by every instance. */
  limits: LimitStore;
  /**
   * Open WebSockets and response streams, each with its identity: ended when the credential is revoked
   * (an account disabled or deleted, a session ended), checked every second while any is open.
   */
  connections: LiveConnections;
  /** Which proxies' forwarded headers are believed (`--trust-proxy`): the client address and protocol. */
  proxies: ProxyTrust;
  /** Families `.use()` this to get `identity` in their handlers; it is the same instance everywhere. */
  identity: ReturnType<typeof identityPlugin>;
  /** Aborted when the server starts shutting down: streams end, background work stops. */
  shutdown: AbortSignal;
  /** MCP servers as tools, shared by every family (server/mcp-client/, docs/mcp-tools.md). */
  mcp: McpClients;
  /** This process's id among the instances on one database, new at every start (in the `ready` log line). */
  instanceId: string;
  /** Who owns live work (turns, index builds) among the instances: rows of `leases` (storage/leases.ts). */
  leases: Leases;
  /** Signals between instances: LISTEN/NOTIFY on PostgreSQL, in-process on SQLite (storage/bus/). */
  bus: SignalBus;
}

export interface ContextOptions {
  config: AppConfig;
  env: EnvSource;
  log: Logger;
  shutdown?: AbortSignal;
  resolvers?: CredentialResolver[];
  /** The process's password queue (tests hand in one with a counting hasher); default: one per core. */
  passwords?: PasswordQueue;
}

export function createContext(options: ContextOptions): AppContext {
  const { config, env, log, shutdown, resolvers } = options;
  const { databaseUrl } = config.policy.secrets;
  const db = databaseUrl ? undefined : openDatabase(join(config.dataDir, "app.db"));
  const database = db ? sqlitePort(db) : openDb({ url: databaseUrl, dataDir: config.dataDir });
  const limits = new LimitStore(database);
  const instanceId = newId("inst");
  const leaseMs = Number(env.get("APP_LEASE_MS") ?? "") || DEFAULT_LEASE_MS;
  const leases = new Leases(database, {
    instance: instanceId,
    ttlMs: leaseMs,
    onError: (error) => log.warn("leases were not renewed", { error: (error as Error).message }),
  });
  const bus: SignalBus = databaseUrl ? new PostgresBus(databaseUrl) : new MemoryBus();
  const { secret, signup } = config.auth;
  const passwords = options.passwords ?? new PasswordQueue();
  const auth = secret ? new SessionAuth({ db: database, secret, signup, limits, passwords }) : undefined;
  const { managedAuthUrl, managedJwksUrl, managedIssuer, managedAudience } = config.auth;
  const managed =
    managedAuthUrl && managedAudience
      ? managedResolver({
          baseUrl: managedAuthUrl,
          jwksUrl: managedJwksUrl,
          issuer: managedIssuer,
          audience: managedAudience,
        })
      : undefined;
  const tokens = new AccessTokens(database);
  const guesses = new BearerGuesses(limits);
  // Sessions and access tokens can be revoked here; managed JWTs and the local user cannot.
  const connections = new LiveConnections((identity) => {
    if (identity.kind === "session") return auth?.stillSignedIn(identity.session) ?? false;
    if (identity.kind === "token") return tokens.stillInForce(identity.token);
    return true;
  });
  auth?.onRevoked(() => void connections.check());
  tokens.onRevoked(() => void connections.check());
  // An access token first: a bearer the caller chose wins over a cookie the browser added.
  const credentials = [
    accessTokenResolver(tokens, guesses),
    ...(auth ? [sessionResolver(auth, guesses)] : []),
    ...(managed ? [managed] : []),
    ...(resolvers ?? []),
  ];
  const proxies = new ProxyTrust(config.auth.trustProxy);
  const scopes = new ScopeRules();
  const routePolicies = new RoutePolicies();
  return {
    config,
    env,
    db,
    database,
    auth,
    tokens,
    scopes,
    routePolicies,
    limits,
    connections,
    proxies,
    models: new ModelService(env),
    log,
    readiness: new Readiness(),
    identity: identityPlugin({
      mode: config.mode,
      resolvers: credentials,
      desktopToken: config.auth.desktopToken,
      proxies,
      scopes,
      policies: routePolicies,
    }),
    shutdown: shutdown ?? new AbortController().signal,
    instanceId,
    leases,
    bus,
    mcp: new McpClients({
      database,
      log,
      adminServers: () => adminServers(config.policy.settings, env),
      rule: outboundRule({
        local: config.mode.kind === "local",
        allow: config.outboundAllow,
        operatorUrls: [env.get("OLLAMA_BASE_URL")],
      }),
    }),
  };
}

/** What startup's migrations need of the context (storage/startup-migrations.ts). */
export function startupDatabases(ctx: AppContext): StartupDatabases {
  const requireHead = ctx.config.policy.settings.database.migrations === "require_head";
  return { database: ctx.database, dataDir: ctx.config.dataDir, log: ctx.log, requireHead };
}
