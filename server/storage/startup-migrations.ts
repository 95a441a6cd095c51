/**
 * What startup does with the schema, per the policy's `[database] migrations`: `apply` applies what is
 * pending, `require_head` refuses a database behind the head (`atrium migrate` moves it). Every scope
 * goes to the one database the server uses: app.db, or PostgreSQL when APP_DATABASE_URL is set.
 *
 * On PostgreSQL an app.db left in the data dir from before the move is not opened (nor its WAL touched):
 * startup says once that it is unused and how its rows move (`atrium db copy`), so no operator backs it up
 * or reads it thinking the rows are there.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log.ts";
import { applyMigrations, fromSqliteSet, requireMigrationHead } from "./db/migrate.ts";
import type { Db } from "./db/port.ts";
import type { MigrationSet } from "./migrate.ts";

/** What startup migrates with (the app context's fields; storage never imports the context). */
export interface StartupDatabases {
  database: Db;
  dataDir: string;
  log: Logger;
  /** The policy's `[database] migrations = "require_head"`. */
  requireHead: boolean;
}

export async function migrateAtStartup(ctx: StartupDatabases, sets: MigrationSet[]): Promise<void> {
  if (ctx.database.engine === "postgres") noteUnusedAppDb(ctx.dataDir, ctx.log);
  const portSets = sets.map(fromSqliteSet);
  if (ctx.requireHead) return requireMigrationHead(ctx.database, portSets);
  const applied = await applyMigrations(ctx.database, portSets);
  if (applied.length > 0) ctx.log.info("migrations applied", { engine: ctx.database.engine, applied });
}

/** The log line for an app.db the PostgreSQL deployment does not use (its existence is all that is read). */
function noteUnusedAppDb(dataDir: string, log: Logger): void {
  const file = join(dataDir, "app.db");
  if (!existsSync(file)) return;
  log.warn(
    "app.db in the data dir is not used: the database is PostgreSQL (APP_DATABASE_URL). Its rows move there with `atrium db copy --from <data dir> --to <url>`; then it can be archived",
    { file },
  );
}
