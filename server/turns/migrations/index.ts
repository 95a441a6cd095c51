/**
 * The turns family's numbered migrations, one text per engine (`.sql` SQLite, `.pg.sql` PostgreSQL);
 * text imports embed the SQL in a compiled binary.
 */
import type { Migration } from "../../storage/migrate.ts";
import turnsPg from "./0001_turns.pg.sql" with { type: "text" };
import turns from "./0001_turns.sql" with { type: "text" };
import runsByKeyPg from "./0002_runs_by_key.pg.sql" with { type: "text" };
import runsByKey from "./0002_runs_by_key.sql" with { type: "text" };
import runModelPg from "./0003_run_model.pg.sql" with { type: "text" };
import runModel from "./0003_run_model.sql" with { type: "text" };

export const turnsMigrations: Migration[] = [
  { version: 1, name: "turns", sql: turns, postgres: turnsPg },
  { version: 2, name: "runs_by_key", sql: runsByKey, postgres: runsByKeyPg },
  { version: 3, name: "run_model", sql: runModel, postgres: runModelPg },
];
