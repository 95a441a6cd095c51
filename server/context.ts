/**
 * What every family receives: configuration, the database and store helper, the model layer, the
 * logger, readiness, the identity plugin, and the shutdown signal that ends long-lived streams.
 */
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import { type CredentialResolver, identityPlugin } from "./auth/identity.ts";
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
  return {
    config,
    env,
    db,
    store: new Store(db),
    models: new ModelService(env),
    log,
    readiness: new Readiness(),
    identity: identityPlugin({ mode: config.mode, resolvers, desktopToken: config.auth.desktopToken }),
    shutdown: shutdown ?? new AbortController().signal,
  };
}
