/** The committed corpus slice for the search tests, and a fresh search database to index it into. */
import type { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { searchMigrations } from "../../server/search/migrations/index.ts";
import { SearchStore } from "../../server/search/stores/search-store.ts";
import { openDatabase } from "../../server/storage/database.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { coreMigrations } from "../../server/storage/migrations/index.ts";
import { Store } from "../../server/storage/store.ts";

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

export function searchDb(): { db: Database; store: SearchStore } {
  const db = openDatabase(":memory:");
  migrate(db, [coreMigrations, { scope: "search", migrations: searchMigrations }]);
  return { db, store: new SearchStore(new Store(db)) };
}
