/**
 * Erasing one owner from the database: every row of every table that has an `owner_id` column (each
 * family keys its user data that way, docs/design.md §5), then the owner's `users` row (which takes the
 * sign-in account and its sessions with it). Found by schema, not by a list, so a table a family adds
 * later is erased too. One transaction; foreign keys are checked at commit, when every row of the owner
 * is gone, so the order tables are visited in does not matter. FTS5 tables that hold their own copy of
 * the text (with an owner_id column) are erased like the others; external-content ones (`content=`) are
 * kept in step by their triggers and must not be touched directly.
 */
import type { Database } from "bun:sqlite";

/** The `content = '...'` option of an external-content FTS5 table (a column named content is not it). */
const EXTERNAL_CONTENT = /\bcontent\s*=\s*'/i;

/** Rows deleted per table (tables with none left out). */
export function eraseOwnerRows(db: Database, owner: string): Record<string, number> {
  const tables = db
    .query<{ name: string; sql: string }, []>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    .all()
    .filter(
      ({ sql }) => !/^CREATE VIRTUAL/i.test(sql) || (/USING fts5/i.test(sql) && !EXTERNAL_CONTENT.test(sql)),
    )
    .map((row) => row.name)
    .filter((name) =>
      db
        .query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${name.replaceAll("'", "''")}')`)
        .all()
        .some((column) => column.name === "owner_id"),
    );
  const deleted: Record<string, number> = {};
  db.transaction(() => {
    db.exec("PRAGMA defer_foreign_keys = ON");
    for (const table of tables) {
      const { changes } = db.run(`DELETE FROM "${table.replaceAll('"', '""')}" WHERE owner_id = ?`, [owner]);
      if (changes > 0) deleted[table] = changes;
    }
    const { changes } = db.run("DELETE FROM users WHERE id = ?", [owner]);
    if (changes > 0) deleted.users = changes;
  })();
  return deleted;
}
