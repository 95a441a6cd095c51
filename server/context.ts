/**
 * What every family receives: configuration, the database and store helper, the model layer, the
 * logger, readiness, the identity plugin, and the shutdown signal that ends long-lived streams.
 */
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import { type CredentialResolver, identityPlugin } from "./auth/identity.ts";
import { managedResolver } from "./auth/managed.ts";
import { ProxyTrust } from "./auth/proxies.ts";
import { SessionAuth } from "./auth/session-auth.ts";
import { sessionResolver } from "./auth/session-resolver.ts";
import type { EnvSource } from "./config/env.ts";
import type { AppConfig } from "./config/index.ts";
import { Readiness } from "./http/readiness.ts";
import type { Logger } from "./log.ts";
import { ModelService } from "./models/service.ts";
import { openDatabase } from "./storage/database.ts";
import { Store } from "./storage/store.ts";

export interface AppContext {
  config: AppConfig;
  env: EnvSource;
  db: Database;
  store: Store;
  models: ModelService;
  log: Logger;
  readiness: Readiness;
  /** Session auth (accounts, sessions, invites, CSRF tokens), when `APP_AUTH_SECRET` is set. */
  auth?: SessionAuth;
  /** Which proxies' forwarded headers are believed (`--trust-proxy`): the client address and protocol. */
  proxies: ProxyTrust;
  /** Families `.use()` this to get `identity` in their handlers; it is the same instance everywhere. */
  identity: ReturnType<typeof identityPlugin>;
  /** Aborted when the server starts shutting down: streams end, background work stops. */
  shutdown: AbortSignal;
}

export interface ContextOptions {
  config: AppConfig;
  env: EnvSource;
  log: Logger;
  shutdown?: AbortSignal;
  resolvers?: CredentialResolver[];
}

export function createContext({ config, env, log, shutdown, resolvers }: ContextOptions): AppContext {
  const db = openDatabase(join(config.dataDir, "app.db"));
  const store = new Store(db);
  const { secret, signup } = config.auth;
  const auth = secret ? new SessionAuth({ store, secret, signup }) : undefined;
  const { managedAuthUrl, managedJwksUrl, managedIssuer, managedAudience } = config.auth;
  const managed = managedAuthUrl
    ? managedResolver({
        baseUrl: managedAuthUrl,
        jwksUrl: managedJwksUrl,
        issuer: managedIssuer,
        audience: managedAudience,
      })
    : undefined;
  const credentials = [
    ...(auth ? [sessionResolver(auth)] : []),
    ...(managed ? [managed] : []),
    ...(resolvers ?? []),
  ];
  return {
    config,
    env,
    db,
    store,
    auth,
    proxies: new ProxyTrust(config.auth.trustProxy),
    models: new ModelService(env),
    log,
    readiness: new Readiness(),
    identity: identityPlugin({
      mode: config.mode,
      resolvers: credentials,
      desktopToken: config.auth.desktopToken,
    }),
    shutdown: shutdown ?? new AbortController().signal,
  };
}
