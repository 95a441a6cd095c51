/** The agents family's numbered migrations (scope `agents`); text imports embed the SQL in a compiled binary. */
import type { Migration } from "../../storage/migrate.ts";
import agents from "./0001_agents.sql" with { type: "text" };

export const agentsMigrations: Migration[] = [{ version: 1, name: "agents", sql: agents }];
