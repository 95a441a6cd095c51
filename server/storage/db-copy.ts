/**
 * `atrium db copy`: moves every table of every scope from one database (app.db, or PostgreSQL) into a
 * PostgreSQL database, so a deployment that started on one machine moves without losing a row.
 *
 * - The target gets this build's migrations first (the source must be at the same head), then each
 *   table in foreign-key order (parents first), each in one transaction that empties it, inserts the
 *   source's rows in batches, reads them back and compares row count and checksum (copy-tables.ts)
 *   with the source's before it commits, recording the table as verified in `db_copy_progress`.
 * - Resumable: a copy stopped half-way (an error, a kill) leaves the tables verified so far; the next
 *   run with the same source checks those again (count and checksum on both sides) instead of copying
 *   them, and copies the rest. A table changed on either side since is reported, not silently kept.
 * - A target holding rows of its own (other than the migrations' local user) is refused unless `force`,
 *   before anything is written; `force` empties every table first.
 * - Identity sequences move past the copied ids at the end, so the next row gets a fresh id.
 */

import {
  batchSize,
  COPY_PROGRESS,
  ident,
  insertParams,
  insertSql,
  planTable,
  readRows,
  sourceColumns,
  TableChecksum,
  type TablePlan,
  targetColumns,
} from "./copy-tables.ts";
import { applyMigrations, type PortMigrationSet } from "./db/migrate.ts";
import type { Db, Queryable, Tx } from "./db/port.ts";
import { tablesOf } from "./postgres-backup.ts";

/** A refusal or a failed check: the command prints its message as one line and exits 1. */
export class CopyError extends Error {
  override name = "CopyError";
}

export interface CopySource {
  /** The source's queries (one snapshot for the whole copy). */
  q: Queryable;
  engine: "sqlite" | "postgres";
  /** What the progress records as the source (a path, or a URL without its password). */
  label: string;
}

export interface CopyOptions {
  force?: boolean;
  /** One line per table, for stderr. */
  progress?: (line: string) => void;
}

export interface TableResult {
  table: string;
  rows: number;
  checksum: string;
  /** `copied` in this run, or `verified` (copied by an earlier run, checked again now). */
  how: "copied" | "verified";
}

const PROGRESS = COPY_PROGRESS;
// memory_terms is derived (memory search's postings, PostgreSQL only): memory_entries' trigger rebuilds
// it as the entries are copied, whichever engine they come from.
const NOT_COPIED = new Set(["schema_migrations", PROGRESS, "memory_terms"]);

/** Copies `source` into `target` (see the module comment); throws CopyError on a refusal or a mismatch. */
export async function copyDatabase(
  source: CopySource,
  target: Db,
  sets: PortMigrationSet[],
  options: CopyOptions = {},
): Promise<TableResult[]> {
  const say = options.progress ?? (() => {});
  await requireSourceHead(source, sets);
  const resume = !options.force && (await previousRun(target, source.label));
  if (!resume) {
    const occupied = await occupiedTables(target, source);
    if (occupied.length > 0 && !options.force)
      throw new CopyError(
        `the target database is not empty (${occupied.slice(0, 4).join(", ")}${occupied.length > 4 ? ", …" : ""}); nothing was written: copy into an empty database, or pass --force to replace its contents`,
      );
  }
  await applyMigrations(target, sets);
  await target.exec(
    `CREATE TABLE IF NOT EXISTS ${PROGRESS} (table_name TEXT PRIMARY KEY, source TEXT NOT NULL, rows BIGINT NOT NULL, checksum TEXT NOT NULL, copied_at TEXT NOT NULL)`,
  );
  // Atrium's tables: those the source has too (another application's tables in the same schema are
  // never emptied or copied).
  const tables: string[] = [];
  for (const t of await tablesOf(target))
    if (!NOT_COPIED.has(t) && (await sourceColumns(source.q, source.engine, t))) tables.push(t);
  if (!resume) {
    // A fresh copy (or --force): nothing of the target's own stays, not even the migrations' local user.
    await target.tx(async (tx) => {
      await tx.exec(`TRUNCATE ${tables.map(ident).join(", ")} CASCADE`);
      await tx.run(`DELETE FROM ${PROGRESS}`);
    });
  }
  const done = new Map(
    (
      await target.all<{ table_name: string; rows: number; checksum: string }>(
        `SELECT table_name, rows, checksum FROM ${PROGRESS} WHERE source = ?`,
        [source.label],
      )
    ).map((r) => [r.table_name, r]),
  );
  const results: TableResult[] = [];
  const mismatches: string[] = [];
  for (const [i, table] of tables.entries()) {
    const step = `[${i + 1}/${tables.length}] ${table}`;
    const plan = await planFor(source, target, table);
    const recorded = done.get(table);
    if (recorded) {
      const src = await checksum(source.q, source.engine, plan, "source");
      const dst = await checksum(target, "postgres", plan, "target");
      const differs = describeDifference(table, src, dst);
      if (differs) {
        mismatches.push(differs);
        say(`${step}: DIFFERS: ${differs}`);
        continue;
      }
      say(`${step}: ${src.rows} rows, verified (copied by an earlier run)`);
      results.push({ table, rows: src.rows, checksum: src.sum, how: "verified" });
      continue;
    }
    const copied = await target.tx((tx) => copyTable(source, tx, plan));
    say(`${step}: ${copied.rows} rows copied, verified`);
    results.push({ table, rows: copied.rows, checksum: copied.sum, how: "copied" });
  }
  if (mismatches.length > 0)
    throw new CopyError(
      `${mismatches.length} table(s) differ from the source: ${mismatches.join("; ")} (run again with --force to copy everything anew)`,
    );
  await advanceSequences(target);
  return results;
}

/** Rows the target holds of its own in Atrium's tables, except the migrations' records and local user. */
async function occupiedTables(target: Db, source: CopySource): Promise<string[]> {
  const tables = await target.all<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const out: string[] = [];
  for (const { name } of tables) {
    if (NOT_COPIED.has(name) || !(await sourceColumns(source.q, source.engine, name))) continue;
    const where = name === "users" ? " WHERE id <> 'local'" : "";
    const row = await target.get<{ n: number }>(`SELECT count(*) AS n FROM ${ident(name)}${where}`);
    if ((row?.n ?? 0) > 0) out.push(`${name}: ${row?.n} rows`);
  }
  return out;
}

/** True when the target records tables verified from this same source (a copy to carry on). */
async function previousRun(target: Db, label: string): Promise<boolean> {
  const exists = await target.get<{ n: number }>(
    `SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = '${PROGRESS}'`,
  );
  if (!exists?.n) return false;
  const rows = await target.get<{ n: number }>(`SELECT count(*) AS n FROM ${PROGRESS} WHERE source = ?`, [
    label,
  ]);
  return (rows?.n ?? 0) > 0;
}

/** The source must hold exactly the migrations this build has (its tables are then the target's). */
async function requireSourceHead(source: CopySource, sets: PortMigrationSet[]): Promise<void> {
  const applied = await source.q
    .all<{ scope: string; version: number }>("SELECT scope, version FROM schema_migrations")
    .catch(() => {
      throw new CopyError(`${source.label} is not an Atrium database (it has no schema_migrations table)`);
    });
  const has = new Set(applied.map((a) => `${a.scope}/${a.version}`));
  const known = new Set(sets.flatMap((s) => s.migrations.map((m) => `${s.scope}/${m.version}`)));
  const pending = [...known].filter((k) => !has.has(k));
  const unknown = [...has].filter((k) => !known.has(k));
  if (unknown.length > 0)
    throw new CopyError(
      `the source was written by a newer build (migrations ${unknown.slice(0, 3).join(", ")} are unknown to this one)`,
    );
  if (pending.length > 0)
    throw new CopyError(
      `the source is behind this build's migrations (${pending.length} pending: ${pending.slice(0, 3).join(", ")}); run \`atrium migrate\` on it first`,
    );
}

async function planFor(source: CopySource, target: Db, table: string): Promise<TablePlan> {
  const from = await sourceColumns(source.q, source.engine, table);
  if (!from) throw new CopyError(`the source has no table ${table}`);
  return planTable(table, await targetColumns(target, table), from, source.engine);
}

interface Sum {
  rows: number;
  sum: string;
}

async function checksum(
  q: Queryable,
  engine: "sqlite" | "postgres",
  plan: TablePlan,
  side: "source" | "target",
) {
  const sum = new TableChecksum(plan);
  for await (const page of readRows(q, engine, plan, side)) for (const row of page) sum.add(row);
  return { rows: sum.rows, sum: sum.digest() };
}

function describeDifference(table: string, src: Sum, dst: Sum): string | undefined {
  if (src.rows !== dst.rows) return `${table}: ${src.rows} rows in the source, ${dst.rows} in the target`;
  if (src.sum !== dst.sum) return `${table}: ${src.rows} rows in both, checksums differ`;
  return undefined;
}

/** Empties the target table, inserts the source's rows, checks them, records the table: one transaction. */
async function copyTable(source: CopySource, tx: Tx, plan: TablePlan): Promise<Sum> {
  await tx.run(`DELETE FROM ${ident(plan.table)}`);
  const src = new TableChecksum(plan);
  const size = batchSize(plan);
  let batch: unknown[][] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await tx.run(
      insertSql(plan, batch.length),
      batch.flatMap((row) => insertParams(plan, row as never)),
    );
    batch = [];
  };
  for await (const page of readRows(source.q, source.engine, plan, "source"))
    for (const row of page) {
      src.add(row);
      batch.push(row);
      if (batch.length >= size) await flush();
    }
  await flush();
  const from = { rows: src.rows, sum: src.digest() };
  const to = await checksum(tx, "postgres", plan, "target");
  const differs = describeDifference(plan.table, from, to);
  if (differs) throw new CopyError(`the copy does not match its source: ${differs}`);
  await tx.run(
    `INSERT INTO ${PROGRESS} (table_name, source, rows, checksum, copied_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (table_name) DO UPDATE SET source = excluded.source, rows = excluded.rows, checksum = excluded.checksum, copied_at = excluded.copied_at`,
    [plan.table, source.label, from.rows, from.sum, new Date().toISOString()],
  );
  return from;
}

/** Each identity column's next value follows the largest copied id. */
async function advanceSequences(target: Db): Promise<void> {
  const identities = await target.all<{ t: string; c: string }>(
    `SELECT table_name AS t, column_name AS c FROM information_schema.columns
     WHERE table_schema = current_schema() AND is_identity = 'YES'`,
  );
  for (const { t, c } of identities)
    await target.get(
      `SELECT setval(pg_get_serial_sequence(?, ?), coalesce((SELECT max(${ident(c)}) FROM ${ident(t)}), 0) + 1, false)`,
      [ident(t), c],
    );
}
