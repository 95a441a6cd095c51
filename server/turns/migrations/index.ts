/** The turns family's numbered migrations; text imports embed the SQL in a compiled binary. */
import type { Migration } from "../../storage/migrate.ts";
import turns from "./0001_turns.sql" with { type: "text" };
import runsByKey from "./0002_runs_by_key.sql" with { type: "text" };

export const turnsMigrations: Migration[] = [
  { version: 1, name: "turns", sql: turns },
  { version: 2, name: "runs_by_key", sql: runsByKey },
];
