/**
 * What startup does with the schema, per the policy's `[database] migrations`: `apply` applies what is
 * pending, `require_head` refuses a database behind the head (`atrium migrate` moves it).
 *
 * While the families move to the database port (docs/database.md), app.db keeps every scope's tables
 * (the synchronous stores read it), and with a PostgreSQL URL the scopes that have their `.pg.sql` twins
 * are migrated there too: those stores read `ctx.database`.
 */
import type { AppContext } from "../context.ts";
import { applyMigrations, fromSqliteSet, postgresScopes, requireMigrationHead } from "./db/migrate.ts";
import { sqlitePort } from "./db/sqlite.ts";
import { type MigrationSet, migrate } from "./migrate.ts";

export async function migrateAtStartup(ctx: AppContext, sets: MigrationSet[]): Promise<void> {
  const requireHead = ctx.config.policy.settings.database.migrations === "require_head";
  const portSets = sets.map(fromSqliteSet);
  if (requireHead) {
    // One port per connection: on SQLite ctx.database is app.db's; on PostgreSQL app.db gets its own.
    const appDb = ctx.database.engine === "sqlite" ? ctx.database : sqlitePort(ctx.db);
    await requireMigrationHead(appDb, portSets);
  } else {
    const applied = migrate(ctx.db, sets);
    if (applied.length > 0) ctx.log.info("migrations applied", { applied });
  }
  if (ctx.database.engine !== "postgres") return;
  const onPostgres = postgresScopes(portSets);
  if (requireHead) {
    await requireMigrationHead(ctx.database, onPostgres);
  } else {
    const applied = await applyMigrations(ctx.database, onPostgres);
    if (applied.length > 0) ctx.log.info("migrations applied on PostgreSQL", { applied });
  }
}
