/** The MCP client's migrations (scope `mcp_client`): the servers users added as tools. */
import type { MigrationSet } from "../../storage/migrate.ts";
import serversPg from "./0001_mcp_servers.pg.sql" with { type: "text" };
import servers from "./0001_mcp_servers.sql" with { type: "text" };

export const mcpClientMigrations: MigrationSet = {
  scope: "mcp_client",
  migrations: [{ version: 1, name: "mcp_servers", sql: servers, postgres: serversPg }],
};
