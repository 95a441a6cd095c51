/**
 * PostgreSQL behind the database port, through Bun's built-in `Bun.SQL` (a connection pool; no other
 * driver). Statements outside a transaction take any pooled connection; a transaction reserves one
 * connection from BEGIN to COMMIT, so transactions run side by side, as many as the pool holds.
 *
 * Rows are made to look like SQLite's (port.ts): Bun.SQL returns bigint (count(*), sum, identity ids)
 * and numeric as strings, booleans as booleans and timestamps as Date; here they become numbers, 1/0 and
 * ISO text, decided by the column's type, never by the look of a value.
 */
// A type only: the SQL client (`Bun.SQL`) loads with the first pool, never on a SQLite deployment.
import type { SQL } from "bun";
import { AppError } from "../../http/errors.ts";
import { isUnstorableText, postgresDialect, toPostgresPlaceholders } from "./dialect.ts";
import {
  type Connection,
  DatabaseUsageError,
  type Db,
  normaliseParams,
  type Row,
  type RunResult,
  refuseInsideOwnTx,
  runCallbacks,
  runTransaction,
  type SqlValue,
  type Tx,
} from "./port.ts";

export interface PostgresPortOptions {
  /** Connections in the pool (default 10). */
  poolSize?: number;
  onCallbackError?: (error: unknown) => void;
}

/** Type OIDs of the columns converted (pg_type): int8, numeric, bool, timestamp, timestamptz. */
const INT8 = 20;
const NUMERIC = 1700;
const BOOL = 16;
const TIMESTAMP = 1114;
const TIMESTAMPTZ = 1184;

interface Column {
  name: string;
  type: number;
}

/** What Bun.SQL's `unsafe()` resolves to: the rows, with the statement's columns and row count. */
type Result = Row[] & { columns?: Column[]; count?: number | null };

interface Unsafe {
  unsafe(sql: string, params?: SqlValue[]): Promise<unknown>;
}

function convert(result: Result): Row[] {
  const columns = result.columns?.filter((c) =>
    [INT8, NUMERIC, BOOL, TIMESTAMP, TIMESTAMPTZ].includes(c.type),
  );
  if (!columns || columns.length === 0) return result;
  for (const row of result) {
    for (const { name, type } of columns) {
      const v = row[name];
      if (v === null || v === undefined) continue;
      if (type === INT8 || type === NUMERIC) row[name] = Number(v);
      else if (type === BOOL) row[name] = v ? 1 : 0;
      else if (v instanceof Date) row[name] = v.toISOString();
    }
  }
  return result;
}

function connectionOf(target: Unsafe): Connection {
  const query = async (sql: string, params: SqlValue[]) => {
    const { text, count } = toPostgresPlaceholders(sql);
    // Bun.SQL would send the statement anyway and the server answer with a protocol error.
    if (count !== params.length) {
      throw new DatabaseUsageError(`the statement has ${count} placeholders and ${params.length} values`);
    }
    try {
      return (await target.unsafe(text, params)) as Result;
    } catch (error) {
      // SQLite stores a NUL character; PostgreSQL's text cannot: the caller's bad input, not a 500.
      if (isUnstorableText(error))
        throw new AppError("invalid", "Text with a NUL character (U+0000) cannot be stored");
      throw error;
    }
  };
  return {
    all: async (sql, params) => convert(await query(sql, params)),
    run: async (sql, params) => ({ changes: (await query(sql, params)).count ?? 0 }),
    // Without parameters Bun.SQL uses the simple protocol, which runs several statements in one go.
    exec: async (sql) => void (await target.unsafe(sql)),
  };
}

/** The port over the PostgreSQL database at `url` (`postgres://user:password@host:port/database`). */
export function openPostgres(url: string, options: PostgresPortOptions = {}): Db {
  // Notices (e.g. "relation already exists, skipping") are the server talking to a human: not logged.
  const sql = new Bun.SQL({ url, max: options.poolSize ?? 10, onnotice: () => {} } as ConstructorParameters<
    typeof SQL
  >[0]);
  return new PostgresDb(
    sql,
    options.onCallbackError ?? ((e) => console.error("an after-commit callback failed:", e)),
  );
}

class PostgresDb implements Db {
  readonly engine = "postgres" as const;
  readonly dialect = postgresDialect;
  private readonly pool: Connection;

  constructor(
    private readonly sql: SQL,
    private readonly onCallbackError: (error: unknown) => void,
  ) {
    this.pool = connectionOf(sql);
  }

  async all<T = Row>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    refuseInsideOwnTx(this);
    return (await this.pool.all(sql, normaliseParams(params))) as T[];
  }

  async get<T = Row>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<RunResult> {
    refuseInsideOwnTx(this);
    return this.pool.run(sql, normaliseParams(params));
  }

  async exec(sql: string): Promise<void> {
    refuseInsideOwnTx(this);
    await this.pool.exec(sql);
  }

  async tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    refuseInsideOwnTx(this);
    const reserved = await this.sql.reserve();
    let outcome: Awaited<ReturnType<typeof runTransaction<T>>>;
    try {
      outcome = await runTransaction(this, connectionOf(reserved), "BEGIN", fn, this.onCallbackError);
    } finally {
      reserved.release();
    }
    runCallbacks(outcome.callbacks, this.onCallbackError);
    return outcome.value;
  }

  async close(): Promise<void> {
    await this.sql.close();
  }
}
