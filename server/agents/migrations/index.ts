/**
 * The agents family's numbered migrations (scope `agents`), one text per engine (`.sql` SQLite,
 * `.pg.sql` PostgreSQL); text imports embed the SQL in a compiled binary.
 */
import type { Migration } from "../../storage/migrate.ts";
import agentsPg from "./0001_agents.pg.sql" with { type: "text" };
import agents from "./0001_agents.sql" with { type: "text" };
import memoryTermsPg from "./0002_memory_terms.pg.sql" with { type: "text" };
import memoryTerms from "./0002_memory_terms.sql" with { type: "text" };

export const agentsMigrations: Migration[] = [
  { version: 1, name: "agents", sql: agents, postgres: agentsPg },
  { version: 2, name: "memory_terms", sql: memoryTerms, postgres: memoryTermsPg },
];
