/** SQL pieces both search stores use: the `?` list of an `IN (...)`, and a row count scoped to one index. */
import type { Store } from "../../storage/store.ts";
import type { IndexRow } from "../types.ts";

/** `?,?,?` for `count` values (callers skip the query when there are none). */
export function placeholders(count: number): string {
  return Array.from({ length: count }, () => "?").join(",");
}

/** Rows of one of the family's tables (a constant name, never input) that belong to the index. */
export function countInIndex(db: Store, table: string, index: IndexRow): number {
  return (
    db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE index_id = ? AND owner_id = ?`, [
      index.id,
      index.owner_id,
    ])?.n ?? 0
  );
}
