/** The chat family's numbered migrations (scope `chat`); text imports embed the SQL in a compiled binary. */
import type { Migration } from "../../storage/migrate.ts";
import mirrorPg from "./0001_mirror.pg.sql" with { type: "text" };
import mirror from "./0001_mirror.sql" with { type: "text" };

export const chatMigrations: Migration[] = [{ version: 1, name: "mirror", sql: mirror, postgres: mirrorPg }];
