/**
 * What startup does with the schema, per the policy's `[database] migrations`: `apply` applies what is
 * pending, `require_head` refuses a database behind the head (`atrium migrate` moves it). The scopes go
 * where app-databases.ts places them: every one in app.db, the converted ones on PostgreSQL too.
 */
import type { AppContext } from "../context.ts";
import { applyEverywhere, migrationPlaces } from "./app-databases.ts";
import { fromSqliteSet, requireMigrationHead } from "./db/migrate.ts";
import { sqlitePort } from "./db/sqlite.ts";
import type { MigrationSet } from "./migrate.ts";

export async function migrateAtStartup(ctx: AppContext, sets: MigrationSet[]): Promise<void> {
  // One port per connection: on SQLite ctx.database is app.db's; on PostgreSQL app.db gets its own.
  const appPort = ctx.database.engine === "sqlite" ? ctx.database : sqlitePort(ctx.db);
  const dbs = { database: ctx.database, appPort };
  const portSets = sets.map(fromSqliteSet);
  if (ctx.config.policy.settings.database.migrations === "require_head") {
    for (const place of migrationPlaces(dbs, portSets)) await requireMigrationHead(place.db, place.sets);
    return;
  }
  for (const { where, applied } of await applyEverywhere(dbs, portSets))
    if (applied.length > 0) ctx.log.info("migrations applied", { where, applied });
}
