/**
 * The few differences between the two engines, in one place, so the SQL in the stores stays hand-written
 * and the same on both (docs/database.md lists the portable forms that need no helper at all).
 *
 * - Placeholders: stores write `?` (positional, SQLite's own form, bound as is); for PostgreSQL they
 *   become `$1, $2, …` here, skipping string literals, quoted identifiers and comments.
 * - Errors: a duplicate key or a broken foreign key is recognised by the engine's code, never by the
 *   words of the message (PostgreSQL's never says `UNIQUE`).
 * - Expressions that differ: the current time as ISO text, seconds since the epoch of an ISO text,
 *   case-insensitive LIKE, the larger of two values, a JSON field as text.
 */

export type Engine = "sqlite" | "postgres";

export interface Dialect {
  readonly engine: Engine;
  /** The current UTC time as ISO 8601 text with milliseconds (`2026-11-27T23:52:51.123Z`), as JS writes it. */
  readonly nowIso: string;
  /** Seconds since 1970 (fractional) of an ISO 8601 text expression (durations, comparisons of ages). */
  epochSeconds(expr: string): string;
  /** The operator of an ASCII-case-insensitive LIKE (SQLite's LIKE already is; PostgreSQL needs ILIKE). */
  readonly likeNoCase: string;
  /** The larger of two values (SQLite's two-argument `max`, PostgreSQL's `GREATEST`). */
  greatest(a: string, b: string): string;
  /** The text of a top-level field of a JSON text column (`key` is a literal name, not user input). */
  jsonText(column: string, key: string): string;
}

const SAFE_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

function checkKey(key: string): string {
  if (!SAFE_KEY.test(key)) throw new Error(`jsonText: '${key}' is not a plain field name`);
  return key;
}

export const sqliteDialect: Dialect = {
  engine: "sqlite",
  nowIso: "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
  epochSeconds: (expr) => `((julianday(${expr}) - 2440587.5) * 86400.0)`,
  likeNoCase: "LIKE",
  greatest: (a, b) => `max(${a}, ${b})`,
  jsonText: (column, key) => `json_extract(${column}, '$.${checkKey(key)}')`,
};

export const postgresDialect: Dialect = {
  engine: "postgres",
  nowIso: `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  epochSeconds: (expr) => `extract(epoch FROM (${expr})::timestamptz)::double precision`,
  likeNoCase: "ILIKE",
  greatest: (a, b) => `GREATEST(${a}, ${b})`,
  // Through text first: a parameter typed json would be JSON-encoded again by Bun.SQL.
  jsonText: (column, key) => `((${column})::text::json ->> '${checkKey(key)}')`,
};

const translated = new Map<string, { text: string; count: number }>();

/**
 * `?` placeholders → `$1, $2, …` for PostgreSQL, with how many there are. Question marks inside '…' strings, "…" identifiers,
 * `--` and `/* *\/` comments and $tag$…$tag$ bodies stay as written. Cached per statement text.
 */
export function toPostgresPlaceholders(sql: string): { text: string; count: number } {
  const cached = translated.get(sql);
  if (cached !== undefined) return cached;
  let out = "";
  let n = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    const skipTo = (end: string, from: number) => {
      const at = sql.indexOf(end, from);
      return at < 0 ? sql.length : at + end.length;
    };
    let next = i + 1;
    if (c === "'" || c === '"') {
      // A doubled quote inside the literal is an escaped quote: keep scanning past it.
      next = i + 1;
      for (;;) {
        next = skipTo(c, next);
        if (sql[next] !== c) break;
        next++;
      }
    } else if (c === "-" && sql[i + 1] === "-") next = skipTo("\n", i);
    else if (c === "/" && sql[i + 1] === "*") next = skipTo("*/", i + 2);
    else if (c === "$") {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))?.[0];
      if (tag) next = skipTo(tag, i + tag.length);
    } else if (c === "?") {
      out += `$${++n}`;
      i++;
      continue;
    }
    out += sql.slice(i, next);
    i = next;
  }
  // Statement texts come from code, so the set is bounded; the cap only guards against a store that
  // builds texts from data (an IN list per length is fine).
  if (translated.size > 5000) translated.clear();
  const result = { text: out, count: n };
  translated.set(sql, result);
  return result;
}

/** An error's engine code: bun:sqlite's `code` (SQLITE_CONSTRAINT_UNIQUE), PostgreSQL's SQLSTATE. */
function codes(error: unknown): { sqlite?: string; sqlstate?: string } {
  if (typeof error !== "object" || error === null) return {};
  const e = error as { code?: unknown; errno?: unknown; name?: unknown };
  // Bun.SQL: `code` is Bun's own (ERR_POSTGRES_SERVER_ERROR), `errno` the server's SQLSTATE.
  if (e.name === "PostgresError") return { sqlstate: typeof e.errno === "string" ? e.errno : undefined };
  return { sqlite: typeof e.code === "string" ? e.code : undefined };
}

/** A UNIQUE or PRIMARY KEY constraint refused the write (on either engine). */
export function isUniqueViolation(error: unknown): boolean {
  const { sqlite, sqlstate } = codes(error);
  return (
    sqlstate === "23505" || sqlite === "SQLITE_CONSTRAINT_UNIQUE" || sqlite === "SQLITE_CONSTRAINT_PRIMARYKEY"
  );
}

/** A FOREIGN KEY constraint refused the write (on either engine). */
export function isForeignKeyViolation(error: unknown): boolean {
  const { sqlite, sqlstate } = codes(error);
  return sqlstate === "23503" || sqlite === "SQLITE_CONSTRAINT_FOREIGNKEY";
}

/**
 * PostgreSQL refused text it cannot hold: a NUL character (U+0000), which its text type has no room for
 * (SQLSTATE 22021; 22P05 in JSON). SQLite stores it; on PostgreSQL it is the caller's bad input.
 */
export function isUnstorableText(error: unknown): boolean {
  const { sqlstate } = codes(error);
  return sqlstate === "22021" || sqlstate === "22P05";
}
