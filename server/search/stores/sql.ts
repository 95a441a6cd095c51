/**
 * SQL pieces the search stores share: the `?` list of an `IN (...)`, a row count scoped to one index, and
 * the two halves of full-text search. On SQLite the family's `*_fts` tables are FTS5 tables ranked with
 * `bm25()`; on PostgreSQL they are plain tables of the same names holding a `tsvector` and a token count
 * per row (migrations/*.pg.sql), ranked by BM25 in SQL (storage/db/text-search.ts).
 */
import type { Engine } from "../../storage/db/dialect.ts";
import type { Queryable, SqlValue } from "../../storage/db/port.ts";
import { TS_CONFIG, textSearchValues } from "../../storage/db/text-search.ts";
import type { IndexRow } from "../types.ts";

/** `?,?,?` for `count` values (callers skip the query when there are none). */
export function placeholders(count: number): string {
  return Array.from({ length: count }, () => "?").join(",");
}

/** Rows of one of the family's tables (a constant name, never input) that belong to the index. */
export async function countInIndex(db: Queryable, table: string, index: IndexRow): Promise<number> {
  return (
    (
      await db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE index_id = ? AND owner_id = ?`, [
        index.id,
        index.owner_id,
      ])
    )?.n ?? 0
  );
}

/**
 * The words of an FTS5 match expression as the callers build it (`"a" OR "b"`, terms.ts): PostgreSQL's
 * BM25 query takes plain text and matches any of its words.
 */
export function matchWords(match: string): string {
  const quoted = [...match.matchAll(/"([^"]*)"/g)].map((m) => m[1] as string);
  return (quoted.length > 0 ? quoted : [match]).join(" ");
}

/**
 * The INSERT of one row's text into a `*_fts` table: FTS5's `rowid` and one column per text on SQLite;
 * on PostgreSQL the row's `id` and one `tsvector` of the texts together (FTS5's per-column weights are
 * not reproduced) with its length. `extra` are further unindexed columns (level, leaf).
 */
export function ftsRow(
  engine: Engine,
  table: string,
  id: number,
  index: IndexRow,
  texts: Record<string, string>,
  extra: Record<string, number> = {},
): { sql: string; params: (string | number)[] } {
  const cols = ["owner_id", "index_id", ...Object.keys(extra)];
  const values = [index.owner_id, index.id, ...Object.values(extra)];
  if (engine === "sqlite") {
    const names = ["rowid", ...cols, ...Object.keys(texts)];
    return {
      sql: `INSERT INTO ${table} (${names.join(", ")}) VALUES (${placeholders(names.length)})`,
      params: [id, ...values, ...Object.values(texts)],
    };
  }
  return {
    sql: `INSERT INTO ${table} (id, ${cols.join(", ")}, tsv, len) SELECT ${placeholders(cols.length + 1)}, ${textSearchValues("?")}`,
    params: [id, ...values, Object.values(texts).join(" ")],
  };
}

/**
 * The index's next `updated_at`: now, or a millisecond past the stored value when now is not later (two
 * changes in one millisecond, or PostgreSQL's `now()`, which is the transaction's start). Strictly
 * increasing, so what is remembered per index version (services/index-stats.ts) never outlives a change.
 */
export function nextUpdatedAt(engine: Engine): string {
  if (engine === "sqlite") {
    const now = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
    return `CASE WHEN ${now} > updated_at THEN ${now} ELSE strftime('%Y-%m-%dT%H:%M:%fZ', julianday(updated_at) + 0.0015 / 86400.0) END`;
  }
  const format = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
  const now = `to_char(now() AT TIME ZONE 'UTC', ${format})`;
  return `CASE WHEN ${now} > updated_at THEN ${now} ELSE to_char((updated_at::timestamptz AT TIME ZONE 'UTC') + interval '1 millisecond', ${format}) END`;
}

/** Does a `*_fts` row (alias-free, PostgreSQL) contain the stemmed word(s) of `?`. */
export const PG_HAS_TERM = `tsv @@ plainto_tsquery('${TS_CONFIG}', ?)`;

/**
 * Inserts rows of one table and gives their ids. On PostgreSQL each row comes back `RETURNING id`; on
 * SQLite the ids are counted on from the table's largest (what SQLite itself would assign a rowid
 * table without AUTOINCREMENT) and written explicitly, since a `RETURNING` row costs SQLite half as
 * much again as the insert, and an index build inserts thousands. Use it inside a transaction only:
 * SQLite's transactions run one at a time, so no other writer takes an id meanwhile.
 */
export class RowInserter {
  private constructor(
    private readonly q: Queryable,
    private readonly sql: string,
    private next: number | undefined,
  ) {}

  static async open(q: Queryable, engine: Engine, table: string, columns: string[]): Promise<RowInserter> {
    const list = columns.join(", ");
    if (engine === "postgres")
      return new RowInserter(
        q,
        `INSERT INTO ${table} (${list}) VALUES (${placeholders(columns.length)}) RETURNING id`,
        undefined,
      );
    const max = await q.get<{ id: number | null }>(`SELECT max(id) AS id FROM ${table}`);
    return new RowInserter(
      q,
      `INSERT INTO ${table} (id, ${list}) VALUES (${placeholders(columns.length + 1)})`,
      (max?.id ?? 0) + 1,
    );
  }

  async insert(values: SqlValue[]): Promise<number> {
    if (this.next === undefined)
      return ((await this.q.get<{ id: number }>(this.sql, values)) as { id: number }).id;
    const id = this.next++;
    await this.q.run(this.sql, [id, ...values]);
    return id;
  }
}
