/**
 * The committed corpus slice for the search tests, and a fresh search database to index it into: an
 * in-memory SQLite file, or with `ATRIUM_TEST_DATABASE=postgres` a fresh PostgreSQL database (the same
 * engine choice as the test apps of tests/helpers/app.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { searchMigrations } from "../../server/search/migrations/index.ts";
import { SearchStore } from "../../server/search/stores/search-store.ts";
import { openDatabase } from "../../server/storage/database.ts";
import { applyMigrations, fromSqliteSet } from "../../server/storage/db/migrate.ts";
import { openDb } from "../../server/storage/db/open.ts";
import { sqlitePort } from "../../server/storage/db/sqlite.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { coreMigrations } from "../../server/storage/migrations/index.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";

export const FIXTURES = join(import.meta.dir, "fixtures");

export function fixtureText(name: "stave-one.txt" | "stave-three.txt"): string {
  return readFileSync(join(FIXTURES, name), "utf8");
}

export function fixtureDocuments(): { title: string; text: string }[] {
  return [
    { title: "stave-one.txt", text: fixtureText("stave-one.txt") },
    { title: "stave-three.txt", text: fixtureText("stave-three.txt") },
  ];
}

/** A migrated search database on `engine` (default: the one the test run is on). */
export async function searchDb(
  engine: "sqlite" | "postgres" = process.env.ATRIUM_TEST_DATABASE === "postgres" ? "postgres" : "sqlite",
): Promise<{ store: SearchStore; close(): Promise<void> }> {
  if (engine === "postgres") {
    const db = openDb({ url: await freshPostgresDatabase(), dataDir: "/nonexistent", poolSize: 2 });
    await applyMigrations(db, [fromSqliteSet({ scope: "search", migrations: searchMigrations })]);
    return { store: new SearchStore(db), close: () => db.close() };
  }
  const raw = openDatabase(":memory:");
  migrate(raw, [coreMigrations, { scope: "search", migrations: searchMigrations }]);
  const db = sqlitePort(raw);
  return { store: new SearchStore(db, raw), close: async () => raw.close() };
}
