/** The per-user sandbox registry's migrations (scope `sandboxes`). */
import type { MigrationSet } from "../../../storage/migrate.ts";
import sandboxes from "./0001_sandboxes.sql" with { type: "text" };

export const sandboxMigrations: MigrationSet = {
  scope: "sandboxes",
  migrations: [{ version: 1, name: "sandboxes", sql: sandboxes }],
};
