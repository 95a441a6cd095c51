/**
 * The small helper every family's store builds on: cached prepared statements, typed reads, and
 * transactions. SQL stays visible in the family stores; this only removes the ceremony around it.
 *
 * Statements are prepared on first use, so a store can be constructed before migrations have run.
 */
import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";
import { asyncTransactionOpen } from "./db/sqlite.ts";

export type Params = Record<string, SQLQueryBindings> | SQLQueryBindings[];

export class Store {
  private readonly statements = new Map<string, Statement>();

  constructor(readonly db: Database) {}

  private refuseDuringAsyncTx(): void {
    if (asyncTransactionOpen(this.db)) refuseWrite();
  }

  private statement(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  /** All rows of a query. */
  all<T>(sql: string, params: Params = []): T[] {
    return this.statement(sql).all(...bind(params)) as T[];
  }

  /** The first row of a query, or undefined. */
  get<T>(sql: string, params: Params = []): T | undefined {
    return (this.statement(sql).get(...bind(params)) as T | null) ?? undefined;
  }

  /** Runs a write; returns how many rows changed and the last inserted rowid. */
  run(sql: string, params: Params = []): { changes: number; lastInsertRowid: number } {
    this.refuseDuringAsyncTx();
    const result = this.statement(sql).run(...bind(params));
    return { changes: result.changes, lastInsertRowid: Number(result.lastInsertRowid) };
  }

  /** Runs `fn` in a transaction (nested calls become savepoints); a throw rolls everything back. */
  tx<T>(fn: () => T): T {
    this.refuseDuringAsyncTx();
    return this.db.transaction(fn)();
  }
}

/**
 * While a store converted to the async port (storage/db) holds this connection in a transaction, a
 * synchronous write would run inside that transaction and vanish with its rollback: refuse it loudly.
 * Only while stores are being converted, family by family; gone with this class.
 */
function refuseWrite(): never {
  throw new Error(
    "a synchronous write reached the database while an async transaction holds it: convert this store to the database port",
  );
}

function bind(params: Params): SQLQueryBindings[] {
  return Array.isArray(params) ? params : [params as SQLQueryBindings];
}
