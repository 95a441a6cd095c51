/**
 * The server's two databases while the families move to the database port (docs/database.md): app.db in
 * the data dir keeps every scope's tables (the synchronous stores read it), and with a PostgreSQL URL
 * the converted scopes (every migration with its `.pg.sql` twin) live on PostgreSQL. Startup, `atrium
 * migrate`, `atrium user` and `atrium backup` all place and migrate the scopes the same way, here.
 */
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import { policyFileToLoad } from "../config/builtin-policy.ts";
import type { EnvSource } from "../config/env.ts";
import { loadPolicy } from "../config/policy.ts";
import { openDatabase } from "./database.ts";
import { applyMigrations, migrationStatus, type PortMigrationSet, postgresScopes } from "./db/migrate.ts";
import { openDb } from "./db/open.ts";
import type { Db } from "./db/port.ts";
import { sqlitePort } from "./db/sqlite.ts";

export interface AppDatabases {
  /** app.db's connection (the synchronous stores' and `ctx.db`). */
  appDb: Database;
  /** The port: app.db's own connection on SQLite, or the PostgreSQL pool. */
  database: Db;
  /** app.db through the port (the same object as `database` on SQLite). */
  appPort: Db;
  close(): Promise<void>;
}

/** Opens app.db and, with a URL, PostgreSQL (a refused URL throws DatabaseUrlError, without the URL). */
export function openAppDatabases(dataDir: string, url: string | undefined): AppDatabases {
  const postgres = url ? openDb({ url, dataDir }) : undefined;
  const appDb = openDatabase(join(dataDir, "app.db"));
  const appPort = sqlitePort(appDb);
  const database = postgres ?? appPort;
  return {
    appDb,
    database,
    appPort,
    async close() {
      await postgres?.close();
      appDb.close();
    },
  };
}

/** The database URL the policy names (`[database] url_env`), for the commands that run beside a server. */
export function policyDatabaseUrl(policyPath: string, dataDir: string, env: EnvSource): string | undefined {
  return loadPolicy(policyFileToLoad(policyPath, dataDir), env).secrets.databaseUrl;
}

/** Where each scope is migrated: app.db gets every scope, PostgreSQL (when used) the converted ones. */
export function migrationPlaces(dbs: Pick<AppDatabases, "database" | "appPort">, sets: PortMigrationSet[]) {
  const places: { db: Db; where: string; sets: PortMigrationSet[] }[] = [
    { db: dbs.appPort, where: "app.db", sets },
  ];
  if (dbs.database.engine === "postgres")
    places.push({ db: dbs.database, where: "the PostgreSQL database", sets: postgresScopes(sets) });
  return places;
}

/** Applies what is pending in every place; returns the applied migrations, per place. */
export async function applyEverywhere(
  dbs: Pick<AppDatabases, "database" | "appPort">,
  sets: PortMigrationSet[],
): Promise<{ where: string; applied: string[] }[]> {
  const out: { where: string; applied: string[] }[] = [];
  for (const place of migrationPlaces(dbs, sets))
    out.push({ where: place.where, applied: await applyMigrations(place.db, place.sets) });
  return out;
}

/** What is pending in every place. */
export async function pendingEverywhere(
  dbs: Pick<AppDatabases, "database" | "appPort">,
  sets: PortMigrationSet[],
): Promise<{ where: string; pending: string[] }[]> {
  const out: { where: string; pending: string[] }[] = [];
  for (const place of migrationPlaces(dbs, sets)) {
    const pending = (await migrationStatus(place.db, place.sets)).flatMap((s) => s.pending);
    out.push({ where: place.where, pending });
  }
  return out;
}
