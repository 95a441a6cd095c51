/**
 * The asynchronous database port every store will run on, whichever engine is behind it: the embedded
 * SQLite file (bun:sqlite, the default) or PostgreSQL (Bun.SQL, a pool), chosen by `APP_DATABASE_URL`
 * (open.ts). SQL stays hand-written in the stores, with `?` placeholders; dialect.ts holds the few
 * differences. docs/database.md explains how a store is converted.
 *
 * Guarantees, the same on both engines (tests/storage/db-port.test.ts runs one suite on each):
 * - `tx(fn)` is atomic: it commits when `fn` resolves and rolls back when it throws; `tx.tx(fn)` inside
 *   it is a savepoint (its throw undoes only its own writes, if the outer `fn` catches it).
 * - `tx.afterCommit(cb)` runs `cb` once the outermost transaction has committed, before `tx()` resolves,
 *   and never when it (or the savepoint that registered `cb`) rolled back: stream events go there.
 * - Inside `fn`, statements go through the `tx` handle. Using the database itself from inside its own
 *   open transaction throws (on SQLite it would wait for the transaction forever; on PostgreSQL it would
 *   run outside it, on another connection). Work that outlives the transaction may use it again.
 * - Rows come back alike: integers as numbers (PostgreSQL's bigint and numeric, count(*) included, which
 *   Bun.SQL gives as strings), booleans as 1/0, timestamps as ISO text.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Dialect, Engine } from "./dialect.ts";

/** What a placeholder binds: booleans are bound as 1/0 and undefined as NULL on both engines. */
export type SqlValue = string | number | bigint | boolean | null | undefined | Uint8Array;
export type Row = Record<string, unknown>;

export interface RunResult {
  /** Rows the statement inserted, updated or deleted. Ids come back with `RETURNING id` and `get`. */
  changes: number;
}

export interface Queryable {
  /** Every row of a query. */
  all<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  /** The first row of a query, or undefined. */
  get<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined>;
  /** A write; how many rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult>;
  /** Statements without parameters, several separated by `;` (DDL, migrations). */
  exec(sql: string): Promise<void>;
}

export interface Tx extends Queryable {
  /** A savepoint inside this transaction: a throw in `fn` undoes only what `fn` wrote, then rethrows. */
  tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Runs `cb` after the outermost transaction commits (never on rollback of it or of this savepoint). */
  afterCommit(cb: () => void): void;
}

export interface Db extends Queryable {
  readonly engine: Engine;
  readonly dialect: Dialect;
  /** Runs `fn` in a transaction: committed when it resolves, rolled back when it throws. */
  tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Closes the connection (or the pool) once running statements finish. */
  close(): Promise<void>;
}

export class DatabaseUsageError extends Error {
  override name = "DatabaseUsageError";
}

/** What an engine adapter provides to the shared transaction logic below. */
export interface Connection {
  all(sql: string, params: SqlValue[]): Promise<Row[]>;
  run(sql: string, params: SqlValue[]): Promise<RunResult>;
  exec(sql: string): Promise<void>;
}

/** Binds booleans as 1/0 and undefined as NULL, so a value means the same on both engines. */
export function normaliseParams(params: readonly SqlValue[]): SqlValue[] {
  return params.map((v) => (v === undefined ? null : typeof v === "boolean" ? (v ? 1 : 0) : v));
}

/** Which transaction (of which database) the current async call chain runs inside. */
interface TxState {
  owner: object;
  open: boolean;
}
const current = new AsyncLocalStorage<TxState>();

/** Throws when called from inside an open transaction of `owner` (see the module comment). */
export function refuseInsideOwnTx(owner: object): void {
  const state = current.getStore();
  if (state?.owner === owner && state.open) {
    throw new DatabaseUsageError(
      "a statement went to the database from inside one of its own open transactions: use the transaction's handle (tx.all/get/run)",
    );
  }
}

/**
 * Runs `fn` as the outermost transaction on `conn` (which the caller reserved for it): BEGIN, COMMIT or
 * ROLLBACK, savepoints for nested calls, and the after-commit callbacks.
 */
export async function runTransaction<T>(
  owner: object,
  conn: Connection,
  begin: string,
  fn: (tx: Tx) => Promise<T>,
  onCallbackError: (error: unknown) => void,
): Promise<{ value: T; callbacks: Array<() => void> }> {
  const state: TxState = { owner, open: true };
  const scope = new TxScope(conn, state);
  await conn.exec(begin);
  let value: T;
  try {
    value = await current.run(state, () => fn(scope));
  } catch (error) {
    state.open = false;
    await conn.exec("ROLLBACK");
    throw error;
  }
  try {
    await conn.exec("COMMIT");
  } catch (error) {
    state.open = false;
    await conn.exec("ROLLBACK").catch(onCallbackError);
    throw error;
  } finally {
    state.open = false;
  }
  return { value, callbacks: scope.callbacks };
}

/** Runs after-commit callbacks in order; one that throws does not stop the others (the data is committed). */
export function runCallbacks(callbacks: Array<() => void>, onError: (error: unknown) => void): void {
  for (const cb of callbacks) {
    try {
      cb();
    } catch (error) {
      onError(error);
    }
  }
}

let savepoints = 0;

class TxScope implements Tx {
  callbacks: Array<() => void> = [];

  constructor(
    private readonly conn: Connection,
    private readonly state: TxState,
  ) {}

  private check(): void {
    if (!this.state.open) throw new DatabaseUsageError("the transaction has already finished");
  }

  async all<T = Row>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    this.check();
    return (await this.conn.all(sql, normaliseParams(params))) as T[];
  }

  async get<T = Row>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<RunResult> {
    this.check();
    return this.conn.run(sql, normaliseParams(params));
  }

  async exec(sql: string): Promise<void> {
    this.check();
    await this.conn.exec(sql);
  }

  async tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    this.check();
    const name = `atrium_sp_${++savepoints}`;
    const inner = new TxScope(this.conn, this.state);
    await this.conn.exec(`SAVEPOINT ${name}`);
    let value: T;
    try {
      value = await fn(inner);
    } catch (error) {
      if (this.state.open) await this.conn.exec(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`);
      throw error;
    }
    await this.conn.exec(`RELEASE SAVEPOINT ${name}`);
    // The savepoint's callbacks now belong to this level: they run if (and when) the outermost commits.
    this.callbacks.push(...inner.callbacks);
    return value;
  }

  afterCommit(cb: () => void): void {
    this.check();
    this.callbacks.push(cb);
  }
}
