/**
 * Numbered, checksummed migrations per engine, over the database port.
 *
 * A scope (the core tables, auth, each family) keeps its migrations in one folder, in pairs with the same
 * number and name: `NNNN_name.sql` for SQLite and `NNNN_name.pg.sql` for PostgreSQL, side by side, so a
 * diff of the pair shows the dialect differences. `schema_migrations` records (scope, version, name,
 * checksum of the engine's own text): the same table and rows as storage/migrate.ts writes today, so an
 * existing app.db carries on. An edited applied migration or a database newer than the build stops
 * startup. Each migration applies in its own transaction, under an advisory lock on PostgreSQL, so two
 * instances starting at once apply it once.
 *
 * The policy's `[database] migrations` says what startup does: `apply` (desktop, single host) applies
 * what is pending; `require_head` (managed profiles) refuses to start on a database behind the head and
 * names `atrium migrate`, which applies them (migrate-command.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MigrationSet } from "../migrate.ts";
import { checksum, MigrationError } from "../migrate.ts";
import type { Db, Queryable } from "./port.ts";

export interface PortMigration {
  version: number;
  name: string;
  /** The SQLite text (`NNNN_name.sql`). */
  sqlite: string;
  /** The PostgreSQL text (`NNNN_name.pg.sql`); absent while a scope is not yet converted. */
  postgres?: string;
}

export interface PortMigrationSet {
  scope: string;
  migrations: PortMigration[];
}

export interface ScopeStatus {
  scope: string;
  applied: number;
  /** Pending migrations as `scope/NNNN_name`. */
  pending: string[];
}

/** A scope written for storage/migrate.ts (SQLite only) as a port set: PostgreSQL refuses it by name. */
export function fromSqliteSet(set: MigrationSet): PortMigrationSet {
  return {
    scope: set.scope,
    migrations: set.migrations.map((m) => ({
      version: m.version,
      name: m.name,
      sqlite: m.sql,
      postgres: m.postgres,
    })),
  };
}

/** Reads a migrations folder: `NNNN_name.sql` with its optional `NNNN_name.pg.sql` twin. */
export function loadMigrationDir(scope: string, dir: string): PortMigrationSet {
  const files = readdirSync(dir).filter((f) => f.endsWith(".sql"));
  const migrations: PortMigration[] = [];
  for (const file of files.filter((f) => !f.endsWith(".pg.sql")).sort()) {
    const match = /^(\d{4})_([a-z0-9_-]+)\.sql$/.exec(file);
    if (!match) throw new MigrationError(`${scope}: '${file}' is not named NNNN_name.sql`);
    const twin = `${file.slice(0, -".sql".length)}.pg.sql`;
    migrations.push({
      version: Number(match[1]),
      name: match[2] as string,
      sqlite: readFileSync(join(dir, file), "utf8"),
      postgres: files.includes(twin) ? readFileSync(join(dir, twin), "utf8") : undefined,
    });
  }
  for (const f of files.filter((f) => f.endsWith(".pg.sql"))) {
    if (!files.includes(f.replace(/\.pg\.sql$/, ".sql")))
      throw new MigrationError(`${scope}: '${f}' has no SQLite twin`);
  }
  return { scope, migrations };
}

const LOCK = "SELECT pg_advisory_xact_lock(hashtext('atrium schema_migrations'))";

async function ensureTable(db: Db): Promise<void> {
  await db.tx(async (tx) => {
    if (db.engine === "postgres") await tx.exec(LOCK);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      scope TEXT NOT NULL,
      version INTEGER NOT NULL,
      name TEXT NOT NULL,
      checksum TEXT NOT NULL,
      applied_at TEXT NOT NULL DEFAULT (${db.dialect.nowIso}),
      PRIMARY KEY (scope, version)
    )`);
  });
}

function textFor(db: Db, scope: string, m: PortMigration): string {
  const sql = db.engine === "postgres" ? m.postgres : m.sqlite;
  if (sql === undefined) {
    throw new MigrationError(
      `${scope}: migration ${m.version} (${m.name}) has no PostgreSQL version yet (${String(m.version).padStart(4, "0")}_${m.name}.pg.sql); this scope runs only on the embedded SQLite database`,
    );
  }
  return sql;
}

const label = (scope: string, m: PortMigration) => `${scope}/${String(m.version).padStart(4, "0")}_${m.name}`;

/** Checks numbering, checksums and unknown versions of one scope; returns its pending migrations. */
async function check(db: Db, q: Queryable, set: PortMigrationSet): Promise<PortMigration[]> {
  const { scope, migrations } = set;
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new MigrationError(
        `${scope}: migrations must be numbered 1, 2, 3...; found ${m.version} at position ${i + 1}`,
      );
    }
  });
  const rows = await q.all<{ version: number; name: string; checksum: string }>(
    "SELECT version, name, checksum FROM schema_migrations WHERE scope = ? ORDER BY version",
    [scope],
  );
  for (const row of rows) {
    const known = migrations[row.version - 1];
    if (!known) {
      throw new MigrationError(
        `${scope}: the database has migration ${row.version} (${row.name}), which this build does not know; it was written by a newer version`,
      );
    }
    if (checksum(textFor(db, scope, known)) !== row.checksum) {
      throw new MigrationError(
        `${scope}: migration ${row.version} (${row.name}) changed after it was applied`,
      );
    }
  }
  return migrations.slice(rows.length);
}

function distinctScopes(sets: PortMigrationSet[]): void {
  const seen = new Set<string>();
  for (const { scope } of sets) {
    if (seen.has(scope)) throw new MigrationError(`migration scope '${scope}' is listed twice`);
    seen.add(scope);
  }
}

/** What is applied and what is pending, per scope (throws on an edited or unknown migration). */
export async function migrationStatus(db: Db, sets: PortMigrationSet[]): Promise<ScopeStatus[]> {
  distinctScopes(sets);
  await ensureTable(db);
  const out: ScopeStatus[] = [];
  for (const set of sets) {
    const pending = await check(db, db, set);
    out.push({
      scope: set.scope,
      applied: set.migrations.length - pending.length,
      pending: pending.map((m) => label(set.scope, m)),
    });
  }
  return out;
}

/** Applies what is pending, each migration in its own transaction; returns them as `scope/NNNN_name`. */
export async function applyMigrations(db: Db, sets: PortMigrationSet[]): Promise<string[]> {
  distinctScopes(sets);
  await ensureTable(db);
  const done: string[] = [];
  for (const set of sets) {
    for (const m of await check(db, db, set)) {
      const sql = textFor(db, set.scope, m);
      const applied = await db.tx(async (tx) => {
        if (db.engine === "postgres") await tx.exec(LOCK);
        // Another instance may have applied it while this one waited for the lock.
        const row = await tx.get("SELECT version FROM schema_migrations WHERE scope = ? AND version = ?", [
          set.scope,
          m.version,
        ]);
        if (row) return false;
        await tx.exec(sql);
        await tx.run("INSERT INTO schema_migrations (scope, version, name, checksum) VALUES (?, ?, ?, ?)", [
          set.scope,
          m.version,
          m.name,
          checksum(sql),
        ]);
        return true;
      });
      if (applied) done.push(label(set.scope, m));
    }
  }
  return done;
}

/** Refuses (MigrationError) a database behind the migration head, naming what is pending and the fix. */
export async function requireMigrationHead(db: Db, sets: PortMigrationSet[]): Promise<void> {
  const pending = (await migrationStatus(db, sets)).flatMap((s) => s.pending);
  if (pending.length === 0) return;
  const shown =
    pending.slice(0, 5).join(", ") + (pending.length > 5 ? `, and ${pending.length - 5} more` : "");
  throw new MigrationError(
    `the database is behind the migration head (${pending.length} pending: ${shown}); this profile does not migrate at startup ([database] migrations = "require_head"): run \`atrium migrate\` with the same data dir and APP_DATABASE_URL, then start again`,
  );
}
