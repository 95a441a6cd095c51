/** The per-user sandbox registry's migrations (scope `sandboxes`). */
import type { MigrationSet } from "../../../storage/migrate.ts";
import sandboxes from "./0001_sandboxes.sql" with { type: "text" };
import uids from "./0002_sandbox_uids.sql" with { type: "text" };

export const sandboxMigrations: MigrationSet = {
  scope: "sandboxes",
  migrations: [
    { version: 1, name: "sandboxes", sql: sandboxes },
    { version: 2, name: "sandbox_uids", sql: uids },
  ],
};
