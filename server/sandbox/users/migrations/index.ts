/** The per-user sandbox registry's migrations (scope `sandboxes`). */
import type { MigrationSet } from "../../../storage/migrate.ts";
import sandboxesPg from "./0001_sandboxes.pg.sql" with { type: "text" };
import sandboxes from "./0001_sandboxes.sql" with { type: "text" };
import uidsPg from "./0002_sandbox_uids.pg.sql" with { type: "text" };
import uids from "./0002_sandbox_uids.sql" with { type: "text" };
import webhookSeenPg from "./0003_webhook_seen.pg.sql" with { type: "text" };
import webhookSeen from "./0003_webhook_seen.sql" with { type: "text" };

export const sandboxMigrations: MigrationSet = {
  scope: "sandboxes",
  migrations: [
    { version: 1, name: "sandboxes", sql: sandboxes, postgres: sandboxesPg },
    { version: 2, name: "sandbox_uids", sql: uids, postgres: uidsPg },
    { version: 3, name: "webhook_seen", sql: webhookSeen, postgres: webhookSeenPg },
  ],
};
