/**
 * The search family's numbered migrations (scope "search"), each with its PostgreSQL twin (`.pg.sql`);
 * text imports embed the SQL in a compiled binary.
 */
import type { Migration } from "../../storage/migrate.ts";
import initialPg from "./0001_search.pg.sql" with { type: "text" };
import initial from "./0001_search.sql" with { type: "text" };
import leadingPg from "./0002_search_leading.pg.sql" with { type: "text" };
import leading from "./0002_search_leading.sql" with { type: "text" };
import vectorsPg from "./0003_search_vectors.pg.sql" with { type: "text" };
import vectors from "./0003_search_vectors.sql" with { type: "text" };
import entityNamesPg from "./0004_search_entity_names.pg.sql" with { type: "text" };
import entityNames from "./0004_search_entity_names.sql" with { type: "text" };

export const searchMigrations: Migration[] = [
  { version: 1, name: "search", sql: initial, postgres: initialPg },
  { version: 2, name: "search-leading-entities", sql: leading, postgres: leadingPg },
  { version: 3, name: "search-entity-vectors", sql: vectors, postgres: vectorsPg },
  { version: 4, name: "search-entity-names", sql: entityNames, postgres: entityNamesPg },
];
