/**
 * What startup does with the schema, per the policy's `[database] migrations`: `apply` applies what is
 * pending, `require_head` refuses a database behind the head (`atrium migrate` moves it). The scopes go
 * where app-databases.ts places them: every one in app.db, the converted ones on PostgreSQL too.
 */
import type { Database } from "bun:sqlite";
import type { Logger } from "../log.ts";
import { applyEverywhere, migrationPlaces } from "./app-databases.ts";
import { fromSqliteSet, requireMigrationHead } from "./db/migrate.ts";
import type { Db } from "./db/port.ts";
import { sqlitePort } from "./db/sqlite.ts";
import type { MigrationSet } from "./migrate.ts";

/** What startup migrates with (the app context's fields; storage never imports the context). */
export interface StartupDatabases {
  db: Database;
  database: Db;
  log: Logger;
  /** The policy's `[database] migrations = "require_head"`. */
  requireHead: boolean;
}

export async function migrateAtStartup(ctx: StartupDatabases, sets: MigrationSet[]): Promise<void> {
  // One port per connection: on SQLite ctx.database is app.db's; on PostgreSQL app.db gets its own.
  const appPort = ctx.database.engine === "sqlite" ? ctx.database : sqlitePort(ctx.db);
  const dbs = { database: ctx.database, appPort };
  const portSets = sets.map(fromSqliteSet);
  if (ctx.requireHead) {
    for (const place of migrationPlaces(dbs, portSets)) await requireMigrationHead(place.db, place.sets);
    return;
  }
  for (const { where, applied } of await applyEverywhere(dbs, portSets))
    if (applied.length > 0) ctx.log.info("migrations applied", { where, applied });
}
