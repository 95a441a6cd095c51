/**
 * Numbered SQL migrations, applied at startup, each in its own transaction.
 *
 * Every family keeps its own numbered list (scope = family name), so families evolve their tables
 * independently; `schema_migrations` records (scope, version, name, checksum). A migration that was
 * applied and later edited, or a database newer than this build, stops startup: silently diverging
 * schemas are worse than a clear error.
 */
import type { Database } from "bun:sqlite";

export interface Migration {
  version: number;
  name: string;
  /** The SQLite text (`NNNN_name.sql`). */
  sql: string;
  /** The PostgreSQL twin (`NNNN_name.pg.sql`), once the scope's stores are on the database port. */
  postgres?: string;
}

export interface MigrationSet {
  scope: string;
  migrations: Migration[];
}

export class MigrationError extends Error {
  override name = "MigrationError";
}

interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
}

export function checksum(sql: string): string {
  return new Bun.CryptoHasher("sha256").update(sql).digest("hex");
}

/** Applies what is pending; returns the migrations applied now as `scope/version_name`. */
export function migrate(db: Database, sets: MigrationSet[]): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    scope TEXT NOT NULL,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (scope, version)
  )`);
  const applied: string[] = [];
  const scopes = new Set<string>();
  for (const set of sets) {
    if (scopes.has(set.scope)) throw new MigrationError(`migration scope '${set.scope}' is listed twice`);
    scopes.add(set.scope);
    applied.push(...migrateScope(db, set));
  }
  return applied;
}

function migrateScope(db: Database, { scope, migrations }: MigrationSet): string[] {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new MigrationError(
        `${scope}: migrations must be numbered 1, 2, 3...; found ${m.version} at position ${i + 1}`,
      );
    }
  });
  const rows = db
    .query<AppliedRow, [string]>(
      "SELECT version, name, checksum FROM schema_migrations WHERE scope = ? ORDER BY version",
    )
    .all(scope);
  for (const row of rows) {
    const known = migrations[row.version - 1];
    if (!known) {
      throw new MigrationError(
        `${scope}: the database has migration ${row.version} (${row.name}), which this build does not know; it was written by a newer version`,
      );
    }
    if (checksum(known.sql) !== row.checksum) {
      throw new MigrationError(
        `${scope}: migration ${row.version} (${row.name}) changed after it was applied`,
      );
    }
  }
  const record = db.query(
    "INSERT INTO schema_migrations (scope, version, name, checksum) VALUES (?, ?, ?, ?)",
  );
  const done: string[] = [];
  for (const m of migrations.slice(rows.length)) {
    db.transaction(() => {
      db.exec(m.sql);
      record.run(scope, m.version, m.name, checksum(m.sql));
    })();
    done.push(`${scope}/${String(m.version).padStart(4, "0")}_${m.name}`);
  }
  return done;
}
