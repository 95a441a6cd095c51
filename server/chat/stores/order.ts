/**
 * Insertion order, the tie-break of the mirror's lists (two sessions touched, or two tool calls started,
 * in one millisecond): SQLite's implicit `rowid`, and on PostgreSQL the `seq` identity column its
 * migration (0001_mirror.pg.sql) adds, since PostgreSQL rows have no stable order of their own.
 */
import type { Db } from "../../storage/db/port.ts";

export function insertionOrder(db: Db): string {
  return db.engine === "postgres" ? "seq" : "rowid";
}
