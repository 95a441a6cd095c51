/** The auth layer's migrations (scope `auth`); the text import embeds the SQL in a compiled binary. */
import type { MigrationSet } from "../../storage/migrate.ts";
import accountsPg from "./0001_accounts.pg.sql" with { type: "text" };
import accounts from "./0001_accounts.sql" with { type: "text" };
import limitsPg from "./0002_limits.pg.sql" with { type: "text" };
import limits from "./0002_limits.sql" with { type: "text" };
import accessTokensPg from "./0003_access_tokens.pg.sql" with { type: "text" };
import accessTokens from "./0003_access_tokens.sql" with { type: "text" };

export const authMigrations: MigrationSet = {
  scope: "auth",
  migrations: [
    { version: 1, name: "accounts", sql: accounts, postgres: accountsPg },
    { version: 2, name: "limits", sql: limits, postgres: limitsPg },
    { version: 3, name: "access_tokens", sql: accessTokens, postgres: accessTokensPg },
  ],
};
