/**
 * The database of the commands that run beside a server on its data dir (`atrium migrate`, `atrium user`,
 * `atrium backup`): the one the server uses, by the same policy. With the policy's APP_DATABASE_URL that
 * is PostgreSQL alone (no app.db is opened or created); without it, app.db in the data dir.
 */
import { policyFileToLoad } from "../config/builtin-policy.ts";
import type { EnvSource } from "../config/env.ts";
import { loadPolicy } from "../config/policy.ts";
import { openDb } from "./db/open.ts";
import type { Db } from "./db/port.ts";

/** The database URL the policy names (`[database] url_env`), if set. */
export function policyDatabaseUrl(policyPath: string, dataDir: string, env: EnvSource): string | undefined {
  return loadPolicy(policyFileToLoad(policyPath, dataDir), env).secrets.databaseUrl;
}

/** Opens the server's database (a refused URL throws DatabaseUrlError, without the URL). */
export function openCommandDatabase(policyPath: string, dataDir: string, env: EnvSource): Db {
  return openDb({ url: policyDatabaseUrl(policyPath, dataDir, env), dataDir });
}

/** How a command names the database in what it prints (never the URL: it may hold a password). */
export function databaseLabel(db: Db, dataDir: string): string {
  return db.engine === "postgres" ? "the PostgreSQL database" : `${dataDir}/app.db`;
}
