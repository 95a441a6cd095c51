/**
 * Erasing one owner from the database: every row of every table that has an `owner_id` column (each
 * family keys its user data that way, docs/design.md §5), then the owner's `users` row (which takes the
 * sign-in account and its sessions with it). Found by schema, not by a list, so a table a family adds
 * later is erased too: SQLite's `sqlite_master`, PostgreSQL's `information_schema`. One transaction, in
 * the server's one database (app.db, or PostgreSQL with APP_DATABASE_URL).
 *
 * On SQLite, foreign keys are checked at commit (deferred), when every row of the owner is gone, so the
 * order tables are visited in does not matter. FTS5 tables that hold their own copy of the text (with an
 * owner_id column) are erased like the others; external-content ones (`content=`) are kept in step by
 * their triggers and must not be touched directly. PostgreSQL checks at once: a table whose rows another
 * of the owner's rows still reference is retried after the others (each attempt in a savepoint).
 */
import { isForeignKeyViolation } from "./db/dialect.ts";
import type { Db, Queryable } from "./db/port.ts";

/** The `content = '...'` option of an external-content FTS5 table (a column named content is not it). */
const EXTERNAL_CONTENT = /\bcontent\s*=\s*'/i;

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The tables with an `owner_id` column that are erased directly (on either engine). */
export async function ownerTables(q: Queryable, engine: Db["engine"]): Promise<string[]> {
  if (engine === "postgres") {
    const rows = await q.all<{ name: string }>(
      `SELECT c.table_name AS name FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
       WHERE c.table_schema = current_schema() AND c.column_name = 'owner_id' AND t.table_type = 'BASE TABLE'
       ORDER BY c.table_name`,
    );
    return rows.map((r) => r.name);
  }
  const tables = await q.all<{ name: string; sql: string }>(
    "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  );
  const out: string[] = [];
  for (const { name, sql } of tables) {
    if (/^CREATE VIRTUAL/i.test(sql) && (!/USING fts5/i.test(sql) || EXTERNAL_CONTENT.test(sql))) continue;
    const columns = await q.all<{ name: string }>(`SELECT name FROM pragma_table_info(${literal(name)})`);
    if (columns.some((c) => c.name === "owner_id")) out.push(name);
  }
  return out;
}

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** Rows deleted per table (tables with none left out), in one database. */
export async function eraseOwnerRows(db: Db, owner: string): Promise<Record<string, number>> {
  const tables = await ownerTables(db, db.engine);
  const deleted: Record<string, number> = {};
  await db.tx(async (tx) => {
    if (db.engine === "sqlite") await tx.exec("PRAGMA defer_foreign_keys = ON");
    let left = tables;
    while (left.length > 0) {
      const blocked: string[] = [];
      for (const table of left) {
        const sql = `DELETE FROM ${quote(table)} WHERE owner_id = ?`;
        try {
          const { changes } =
            db.engine === "sqlite" ? await tx.run(sql, [owner]) : await tx.tx((sp) => sp.run(sql, [owner]));
          if (changes > 0) deleted[table] = changes;
        } catch (error) {
          if (!isForeignKeyViolation(error)) throw error;
          blocked.push(table);
        }
      }
      // No progress: a row outside the owner's references theirs; the error says which.
      if (blocked.length === left.length)
        await tx.run(`DELETE FROM ${quote(blocked[0] as string)} WHERE owner_id = ?`, [owner]);
      left = blocked;
    }
    const { changes } = await tx.run("DELETE FROM users WHERE id = ?", [owner]);
    if (changes > 0) deleted.users = changes;
  });
  return deleted;
}
