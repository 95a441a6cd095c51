/**
 * The small helper every family's store builds on: cached prepared statements, typed reads, and
 * transactions. SQL stays visible in the family stores; this only removes the ceremony around it.
 *
 * Statements are prepared on first use, so a store can be constructed before migrations have run.
 */
import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";

export type Params = Record<string, SQLQueryBindings> | SQLQueryBindings[];

export class Store {
  private readonly statements = new Map<string, Statement>();

  constructor(readonly db: Database) {}

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
    const result = this.statement(sql).run(...bind(params));
    return { changes: result.changes, lastInsertRowid: Number(result.lastInsertRowid) };
  }

  /** Runs `fn` in a transaction (nested calls become savepoints); a throw rolls everything back. */
  tx<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}

function bind(params: Params): SQLQueryBindings[] {
  return Array.isArray(params) ? params : [params as SQLQueryBindings];
}
