/**
 * The embedded engine behind the database port: one bun:sqlite connection with today's settings
 * (storage/database.ts: WAL, mmap, foreign keys, strict bindings), statements run synchronously and
 * handed back as settled promises.
 *
 * One connection means one transaction at a time, and an async transaction stays open across awaits:
 * a statement from another caller issued meanwhile would run inside it and be rolled back with it. So
 * the adapter serialises: while a transaction is open, every other caller's statement (and the next
 * transaction) waits its turn, first come first served; with none open, a statement runs at once.
 */
import type { Database, Statement } from "bun:sqlite";
import { openDatabase } from "../database.ts";
import { sqliteDialect } from "./dialect.ts";
import {
  type Connection,
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

export interface SqlitePortOptions {
  /** Called with an error thrown by an after-commit callback (the transaction stays committed). */
  onCallbackError?: (error: unknown) => void;
}

/** The port over the SQLite file at `path` (`:memory:` for a private in-memory database). */
export function openSqlite(path: string, options: SqlitePortOptions = {}): Db {
  return sqlitePort(openDatabase(path), options);
}

/** The port over an open bun:sqlite connection (the one the rest of the server already uses). */
export function sqlitePort(db: Database, options: SqlitePortOptions = {}): Db {
  return new SqliteDb(db, options.onCallbackError ?? reportCallbackError);
}

function reportCallbackError(error: unknown): void {
  console.error("an after-commit callback failed:", error);
}

class SqliteDb implements Db {
  readonly engine = "sqlite" as const;
  readonly dialect = sqliteDialect;
  private readonly statements = new Map<string, Statement>();
  private readonly conn: Connection;
  /** A transaction holds the connection; `waiting` are the callers queued behind it, in order. */
  private held = false;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly db: Database,
    private readonly onCallbackError: (error: unknown) => void,
  ) {
    const statement = (sql: string) => {
      let stmt = this.statements.get(sql);
      if (!stmt) {
        stmt = this.db.prepare(sql);
        this.statements.set(sql, stmt);
      }
      return stmt;
    };
    this.conn = {
      all: async (sql, params) => statement(sql).all(...(params as never[])) as Row[],
      run: async (sql, params) => ({ changes: statement(sql).run(...(params as never[])).changes }),
      exec: async (sql) => void this.db.exec(sql),
    };
  }

  private async acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }

  /** One statement outside any transaction: at once when the connection is free, else in turn. */
  private async single<T>(work: () => Promise<T>): Promise<T> {
    refuseInsideOwnTx(this);
    if (!this.held) return work();
    await this.acquire();
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  all<T = Row>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.single(() => this.conn.all(sql, normaliseParams(params))) as Promise<T[]>;
  }

  async get<T = Row>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<RunResult> {
    return this.single(() => this.conn.run(sql, normaliseParams(params)));
  }

  exec(sql: string): Promise<void> {
    return this.single(() => this.conn.exec(sql));
  }

  async tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    refuseInsideOwnTx(this);
    await this.acquire();
    let outcome: Awaited<ReturnType<typeof runTransaction<T>>>;
    try {
      // IMMEDIATE takes the write lock up front: another process (the index command, a backup) cannot
      // make this transaction fail half-way with SQLITE_BUSY when it first writes.
      outcome = await runTransaction(this, this.conn, "BEGIN IMMEDIATE", fn, this.onCallbackError);
    } finally {
      this.release();
    }
    runCallbacks(outcome.callbacks, this.onCallbackError);
    return outcome.value;
  }

  async close(): Promise<void> {
    await this.acquire();
    for (const stmt of this.statements.values()) stmt.finalize();
    this.statements.clear();
    this.db.close();
  }
}
