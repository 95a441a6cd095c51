/**
 * One table of `atrium db copy` (db-copy.ts): which source column fills which target column, the rows
 * read in key order a page at a time, their checksum, and the batched INSERT into PostgreSQL.
 *
 * The checksum is computed here, in the same code for both engines, over the rows in primary-key order
 * (text keys in byte order: SQLite's BINARY, PostgreSQL's `COLLATE "C"`), from the values as the port
 * returns them (integers and bigints as numbers, booleans as 1/0, bytes as hex, JSON columns re-encoded),
 * so a row that differs in one value gives another checksum on either side.
 *
 * What is derived on PostgreSQL is not copied but rebuilt: a search `*_fts` table of SQLite is an FTS5
 * table holding the texts, its PostgreSQL twin holds their `tsv` and `len`, computed here from those
 * texts as the search stores do; `memory_entries`' `tsv` and `len` come from its trigger. SQLite's
 * implicit `rowid` fills the PostgreSQL `rowid` order columns (turns and chat) and the `id` of the fts rows.
 */
import type { Engine } from "./db/dialect.ts";
import type { Queryable, Row, SqlValue } from "./db/port.ts";
import { TS_CONFIG, textSearchLength } from "./db/text-search.ts";

/** Where `atrium db copy` records the tables it verified (a record of the move, not the app's data). */
export const COPY_PROGRESS = "db_copy_progress";

export const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

export interface TargetColumn {
  name: string;
  /** `format_type` of the column: the cast every bound value gets. */
  type: string;
}

export interface TablePlan {
  table: string;
  /**
   * Target columns copied, each with the source expression that fills it (same order); `summed` is false
   * for the text-search columns (`tsv`, `len`), which SQLite does not hold: the checksum is then the same
   * whichever engine the rows came from.
   */
  columns: { target: TargetColumn; source: string; summed: boolean }[];
  /** Source text columns joined into one text for `tsv`/`len` (a SQLite FTS5 table), if any. */
  texts: string[];
  /** Indexes into `columns` of the primary key (the read order). */
  key: number[];
}

const PAGE = 1000;

/** The target table's columns and primary key, as PostgreSQL has them. */
export async function targetColumns(q: Queryable, table: string) {
  const columns = await q.all<{ name: string; type: string; pk: number }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
       (CASE WHEN a.attnum = ANY (coalesce(i.indkey::int2[], '{}')) THEN 1 ELSE 0 END) AS pk
     FROM pg_attribute a
     LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
     WHERE a.attrelid = (quote_ident(current_schema()) || '.' || quote_ident(?))::regclass
       AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY a.attnum`,
    [table],
  );
  return columns;
}

/** The source table's column names (undefined when it has no such table). */
export async function sourceColumns(q: Queryable, engine: Engine, table: string) {
  const rows =
    engine === "sqlite"
      ? await q.all<{ name: string }>("SELECT name FROM pragma_table_info(?)", [table])
      : await q.all<{ name: string }>(
          `SELECT column_name AS name FROM information_schema.columns
           WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`,
          [table],
        );
  return rows.length > 0 ? rows.map((r) => r.name) : undefined;
}

/** How the target's `table` is filled from the source's columns (see the module comment). */
export function planTable(
  table: string,
  target: { name: string; type: string; pk: number }[],
  source: string[],
  sourceEngine: Engine,
): TablePlan {
  const names = new Set(target.map((c) => c.name));
  const has = new Set(source);
  const ftsFromSqlite = sourceEngine === "sqlite" && table.endsWith("_fts") && names.has("tsv");
  const columns: TablePlan["columns"] = [];
  const key: number[] = [];
  for (const c of target) {
    let from: string | undefined;
    if (has.has(c.name)) from = ident(c.name);
    else if (sourceEngine === "sqlite" && (c.name === "rowid" || (ftsFromSqlite && c.name === "id")))
      from = "rowid";
    if (from === undefined) continue; // derived: tsv/len, pgvector's column, defaults
    if (c.pk) key.push(columns.length);
    const summed = !(names.has("tsv") && (c.name === "tsv" || c.name === "len"));
    columns.push({ target: { name: c.name, type: c.type }, source: from, summed });
  }
  const texts = ftsFromSqlite ? source.filter((name) => !names.has(name)) : [];
  if (key.length === 0) for (let i = 0; i < columns.length; i++) key.push(i);
  return { table, columns, texts, key };
}

/** A key expression in byte order on either engine. */
function ordered(expr: string, engine: Engine, type: string): string {
  return engine === "postgres" && /^(text|character)/.test(type) ? `${expr} COLLATE "C"` : expr;
}

/**
 * Reads the rows in key order, a page at a time: each row is the copied columns' values, then the joined
 * text when the plan has texts. `side` says whether the source's or the target's expressions are read.
 */
export async function* readRows(
  q: Queryable,
  engine: Engine,
  plan: TablePlan,
  side: "source" | "target",
): AsyncGenerator<SqlValue[][]> {
  const exprs = plan.columns.map((c) => (side === "source" ? c.source : ident(c.target.name)));
  const texts = side === "source" ? plan.texts.map(ident) : [];
  const select = [...exprs, ...texts].map((e, i) => `${e} AS c${i}`).join(", ");
  const keys = plan.key.map((i) => ordered(exprs[i] as string, engine, plan.columns[i]?.target.type ?? ""));
  const cast = (i: number) => (engine === "postgres" ? `CAST(? AS ${plan.columns[i]?.target.type})` : "?");
  const after = `(${keys.join(", ")}) > (${plan.key.map(cast).join(", ")})`;
  const base = `SELECT ${select} FROM ${ident(plan.table)}`;
  const order = `ORDER BY ${keys.join(", ")} LIMIT ${PAGE}`;
  let last: SqlValue[] | undefined;
  for (;;) {
    const rows = await q.all<Row>(last ? `${base} WHERE ${after} ${order}` : `${base} ${order}`, last ?? []);
    if (rows.length === 0) return;
    const values = rows.map((r) => Object.keys(r).map((k) => r[k] as SqlValue));
    yield values;
    if (rows.length < PAGE) return;
    const end = values[values.length - 1] as SqlValue[];
    last = plan.key.map((i) => end[i]);
  }
}

/** A running count and checksum of a table's rows (the copied columns, but for text-search ones). */
export class TableChecksum {
  private readonly hash = new Bun.CryptoHasher("sha256");
  rows = 0;
  private readonly json: boolean[];
  private readonly summed: number[];

  constructor(plan: TablePlan) {
    this.json = plan.columns.map((c) => /^jsonb?$/.test(c.target.type));
    this.summed = plan.columns.flatMap((c, i) => (c.summed ? [i] : []));
  }

  add(row: readonly SqlValue[]): void {
    this.rows++;
    for (const i of this.summed) {
      const text = normalise(row[i], this.json[i] === true);
      this.hash.update(`${text.length}:${text}`);
    }
    this.hash.update("\n");
  }

  digest(): string {
    return this.hash.digest("hex");
  }
}

/** One value as text, the same from either engine: tag, then the value's canonical form. */
function normalise(value: unknown, json: boolean): string {
  if (value === null || value === undefined) return "N";
  if (typeof value === "number" || typeof value === "bigint") return `n${value}`;
  if (typeof value === "boolean") return value ? "n1" : "n0";
  if (value instanceof Uint8Array) return `b${Buffer.from(value).toString("hex")}`;
  if (value instanceof Date) return `s${value.toISOString()}`;
  const text = String(value);
  if (json) {
    try {
      return `j${JSON.stringify(JSON.parse(text))}`;
    } catch {
      return `s${text}`;
    }
  }
  return `s${text}`;
}

/** The INSERT of `count` rows into the target (the fts texts become `tsv` and `len`). */
export function insertSql(plan: TablePlan, count: number): string {
  const cols = plan.columns.map((c) => ident(c.target.name));
  const casts = plan.columns.map((c) => `CAST(? AS ${c.target.type})`);
  const table = ident(plan.table);
  if (plan.texts.length === 0) {
    const row = `(${casts.join(", ")})`;
    return `INSERT INTO ${table} (${cols.join(", ")}) OVERRIDING SYSTEM VALUE VALUES ${Array(count).fill(row).join(", ")}`;
  }
  const row = `(${[...casts, "CAST(? AS text)"].join(", ")})`;
  const alias = plan.columns.map((_, i) => `c${i}`);
  return `INSERT INTO ${table} (${cols.join(", ")}, tsv, len) OVERRIDING SYSTEM VALUE
    SELECT ${alias.map((a) => `v.${a}`).join(", ")}, x.tsv, ${textSearchLength("x.tsv")}
    FROM (VALUES ${Array(count).fill(row).join(", ")}) AS v (${[...alias, "body"].join(", ")})
    CROSS JOIN LATERAL (SELECT to_tsvector('${TS_CONFIG}', v.body) AS tsv) x`;
}

/** A source row as the INSERT binds it: the columns, then the texts joined as the search stores join them. */
export function insertParams(plan: TablePlan, row: readonly SqlValue[]): SqlValue[] {
  const n = plan.columns.length;
  if (plan.texts.length === 0) return row.slice(0, n);
  return [...row.slice(0, n), row.slice(n).join(" ")];
}

/** Rows per INSERT: PostgreSQL takes at most 65535 parameters per statement. */
export function batchSize(plan: TablePlan): number {
  return Math.max(1, Math.min(500, Math.floor(30000 / (plan.columns.length + 1))));
}
