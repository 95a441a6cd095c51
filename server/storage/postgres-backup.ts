/**
 * The PostgreSQL half of `atrium backup` (backup-command.ts copies app.db and the data dir's files):
 * `pg_dump` when it is on PATH (a plain SQL dump: `psql -f postgres.sql` into an empty database restores
 * it), else an export written here, in one REPEATABLE READ, READ ONLY transaction so every table is read
 * at the same instant while the server keeps writing.
 *
 * The export is SQL too, loadable into an empty database by `psql --single-transaction -f` or any
 * client that runs several statements in a transaction: first each converted scope's migrations as applied (their `.pg.sql` texts, so the schema
 * is exactly what `atrium migrate` would build), then every table's rows as INSERTs (the rows the
 * migrations inserted themselves, such as the local user and `schema_migrations`, are skipped by ON
 * CONFLICT), then each identity column's sequence moved past the copied ids.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { COPY_PROGRESS } from "./copy-tables.ts";
import type { PortMigrationSet } from "./db/migrate.ts";
import type { Db, Queryable } from "./db/port.ts";

export interface PostgresBackup {
  /** `pg_dump` or `export` (no pg_dump on PATH, or told not to use it). */
  method: "pg_dump" | "export";
  file: string;
  tables: number;
  rows: number;
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A value as a SQL literal (strings in standard-conforming quotes, bytes as bytea hex). */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`a value that SQL cannot hold: ${value}`);
    return String(value);
  }
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (value instanceof Uint8Array) return `'\\x${Buffer.from(value).toString("hex")}'::bytea`;
  return `'${String(value).replaceAll("'", "''")}'`;
}

/** Backs the database of `url` up into `file`: pg_dump when available (`usePgDump`), else the export. */
export async function backupPostgres(
  db: Db,
  url: string,
  file: string,
  sets: PortMigrationSet[],
  options: { usePgDump?: boolean } = {},
): Promise<PostgresBackup> {
  const pgDump = options.usePgDump === false ? null : Bun.which("pg_dump");
  if (pgDump) {
    // The URL goes in the environment, not the argument list (other users can read a process's arguments).
    const proc = Bun.spawn([pgDump, "--format=plain", "--no-owner", "--no-privileges", "--file", file], {
      env: { ...process.env, ...libpqEnv(url) },
      stdout: "ignore",
      stderr: "pipe",
    });
    const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    // pg_dump's messages name the server, not the password; the URL itself is never repeated.
    if (code !== 0) throw new Error(`pg_dump failed (exit ${code}): ${err.replaceAll(url, "<url>").trim()}`);
    const counted = await countRows(db);
    return { method: "pg_dump", file, ...counted };
  }
  return exportSql(db, file, sets);
}

/** libpq's environment for a `postgres://user:password@host:port/db?sslmode=…` URL. */
export function libpqEnv(url: string): Record<string, string> {
  const u = new URL(url);
  const env: Record<string, string> = {
    PGHOST: decodeURIComponent(u.hostname.replace(/^\[(.*)\]$/, "$1")),
    PGPORT: u.port || "5432",
    PGDATABASE: decodeURIComponent(u.pathname.slice(1)),
  };
  if (u.username) env.PGUSER = decodeURIComponent(u.username);
  if (u.password) env.PGPASSWORD = decodeURIComponent(u.password);
  const sslmode = u.searchParams.get("sslmode");
  if (sslmode) env.PGSSLMODE = sslmode;
  return env;
}

/** The schema's tables, each after the tables its foreign keys point at (so its rows load after theirs). */
export async function tablesOf(q: Queryable): Promise<string[]> {
  const names = (
    await q.all<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables
       WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
    )
  ).map((r) => r.name);
  const edges = await q.all<{ child: string; parent: string }>(
    `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent FROM pg_constraint c
     WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`,
  );
  const unquote = (n: string) => n.replace(/^"(.*)"$/, "$1").replaceAll('""', '"');
  const ordered: string[] = [];
  const visit = (name: string, path: Set<string>) => {
    if (ordered.includes(name) || path.has(name)) return;
    path.add(name);
    for (const e of edges)
      if (unquote(e.child) === name && unquote(e.parent) !== name) visit(unquote(e.parent), path);
    path.delete(name);
    if (names.includes(name)) ordered.push(name);
  };
  for (const name of names) visit(name, new Set());
  return ordered;
}

async function countRows(db: Db): Promise<{ tables: number; rows: number }> {
  const tables = await tablesOf(db);
  let rows = 0;
  for (const t of tables)
    rows += (await db.get<{ n: number }>(`SELECT count(*) AS n FROM ${ident(t)}`))?.n ?? 0;
  return { tables: tables.length, rows };
}

/** The export: one snapshot, written as SQL (see the module comment). */
async function exportSql(db: Db, file: string, sets: PortMigrationSet[]): Promise<PostgresBackup> {
  const fd = openSync(file, "wx", 0o600);
  const write = (text: string) => void writeSync(fd, text);
  try {
    return await db.tx(async (tx) => {
      await tx.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
      write(
        "-- Atrium's PostgreSQL tables, exported by `atrium backup` in one snapshot.\n-- Load into an empty database in one transaction: psql --single-transaction -f postgres.sql\n",
      );
      const applied = await tx.all<{ scope: string; version: number }>(
        "SELECT scope, version FROM schema_migrations ORDER BY scope, version",
      );
      for (const set of sets)
        for (const m of set.migrations)
          if (applied.some((a) => a.scope === set.scope && a.version === m.version) && m.postgres)
            write(`\n-- ${set.scope}/${String(m.version).padStart(4, "0")}_${m.name}\n${m.postgres}\n`);
      const schemaTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
  scope TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL, checksum TEXT NOT NULL,
  applied_at TEXT NOT NULL, PRIMARY KEY (scope, version));\n`;
      write(`\n${schemaTable}`);
      // The record of an `atrium db copy` is not restored: no migration creates its table.
      const tables = (await tablesOf(tx)).filter((t) => t !== COPY_PROGRESS);
      let rows = 0;
      for (const table of tables) {
        const all = await tx.all<Record<string, unknown>>(`SELECT * FROM ${ident(table)}`);
        if (all.length === 0) continue;
        const columns = Object.keys(all[0] as object);
        write(`\n-- ${table}: ${all.length} rows\n`);
        for (const row of all) {
          const values = columns.map((c) => sqlLiteral(row[c])).join(", ");
          write(
            // OVERRIDING SYSTEM VALUE: identity columns GENERATED ALWAYS (the `rowid` order columns) take the copied values.
            `INSERT INTO ${ident(table)} (${columns.map(ident).join(", ")}) OVERRIDING SYSTEM VALUE VALUES (${values}) ON CONFLICT DO NOTHING;\n`,
          );
        }
        rows += all.length;
      }
      // Identity columns: the next generated id follows the copied ones.
      const identities = await tx.all<{ table_name: string; column_name: string }>(
        `SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = current_schema() AND is_identity = 'YES'`,
      );
      for (const { table_name: t, column_name: c } of identities)
        write(
          `SELECT setval(pg_get_serial_sequence(${sqlLiteral(ident(t))}, ${sqlLiteral(c)}), coalesce((SELECT max(${ident(c)}) FROM ${ident(t)}), 0) + 1, false);\n`,
        );
      return { method: "export" as const, file, tables: tables.length, rows };
    });
  } finally {
    closeSync(fd);
  }
}
