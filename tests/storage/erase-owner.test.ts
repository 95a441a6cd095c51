/**
 * Erasing an owner (`atrium user delete`) on both engines: every table with an `owner_id` column, found
 * by schema (`sqlite_master` / `information_schema`), then the `users` row, in one transaction per
 * database. On PostgreSQL foreign keys are checked at once, so a table whose rows the owner's other rows
 * still reference is deleted after them; a row of someone else that references the owner's stops the
 * erase and leaves everything in place.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { applyMigrations, fromSqliteSet } from "../../server/storage/db/migrate.ts";
import type { Db } from "../../server/storage/db/port.ts";
import { openPostgres } from "../../server/storage/db/postgres.ts";
import { openSqlite } from "../../server/storage/db/sqlite.ts";
import { eraseOwnerRows } from "../../server/storage/erase-owner.ts";
import { coreMigrations } from "../../server/storage/migrations/index.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";

const open: Db[] = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
});

const engines: Record<string, () => Promise<Db>> = {
  sqlite: async () => openSqlite(":memory:"),
  postgres: async () => openPostgres(await freshPostgresDatabase()),
};

/** Core's tables and two of a family's: notes, and marks on them (no cascade), the parent first by name. */
async function fixture(make: () => Promise<Db>): Promise<Db> {
  const db = await make();
  open.push(db);
  await applyMigrations(db, [fromSqliteSet(coreMigrations)]);
  await db.exec(`
    CREATE TABLE a_notes (id TEXT PRIMARY KEY, owner_id TEXT NOT NULL);
    CREATE TABLE z_marks (id TEXT PRIMARY KEY, owner_id TEXT NOT NULL, note_id TEXT NOT NULL REFERENCES a_notes (id));
  `);
  for (const owner of ["ann", "bob"]) {
    await db.run("INSERT INTO users (id, display_name) VALUES (?, ?)", [owner, owner]);
    await db.run("INSERT INTO a_notes (id, owner_id) VALUES (?, ?)", [`n-${owner}`, owner]);
    await db.run("INSERT INTO z_marks (id, owner_id, note_id) VALUES (?, ?, ?)", [
      `m-${owner}`,
      owner,
      `n-${owner}`,
    ]);
  }
  return db;
}

const count = async (db: Db, table: string, owner: string) =>
  (await db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE owner_id = ?`, [owner]))?.n;

for (const [engine, make] of Object.entries(engines)) {
  describe(`erase an owner on ${engine}`, () => {
    test("every owner_id table and the users row go, whatever order the foreign keys need; others stay", async () => {
      const db = await fixture(make);
      expect(await eraseOwnerRows(db, "ann")).toEqual({ a_notes: 1, z_marks: 1, users: 1 });
      for (const table of ["a_notes", "z_marks"]) {
        expect(await count(db, table, "ann")).toBe(0);
        expect(await count(db, table, "bob")).toBe(1);
      }
      expect(await db.all("SELECT id FROM users ORDER BY id")).toEqual([{ id: "bob" }, { id: "local" }]);
    });

    test("another owner's row referencing the owner's stops the erase, and nothing is deleted", async () => {
      const db = await fixture(make);
      await db.run("INSERT INTO z_marks (id, owner_id, note_id) VALUES ('m-bob-on-ann', 'bob', 'n-ann')");
      await expect(eraseOwnerRows(db, "ann")).rejects.toThrow();
      expect(await count(db, "a_notes", "ann")).toBe(1);
      expect(await count(db, "z_marks", "ann")).toBe(1);
      expect(await db.get("SELECT id FROM users WHERE id = 'ann'")).toEqual({ id: "ann" });
    });
  });
}
