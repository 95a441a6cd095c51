/**
 * The core scope's migrations. The text imports embed the SQL in a compiled binary. Families list their
 * own migrations in their folders (scope = family name).
 */
import type { MigrationSet } from "../migrate.ts";
import usersPg from "./0001_users.pg.sql" with { type: "text" };
import users from "./0001_users.sql" with { type: "text" };
import dataDirStepsPg from "./0002_data_dir_steps.pg.sql" with { type: "text" };
import dataDirSteps from "./0002_data_dir_steps.sql" with { type: "text" };
import leasesPg from "./0003_leases.pg.sql" with { type: "text" };
import leases from "./0003_leases.sql" with { type: "text" };
import instancesPg from "./0004_instances.pg.sql" with { type: "text" };
import instances from "./0004_instances.sql" with { type: "text" };

export const coreMigrations: MigrationSet = {
  scope: "core",
  migrations: [
    { version: 1, name: "users", sql: users, postgres: usersPg },
    { version: 2, name: "data_dir_steps", sql: dataDirSteps, postgres: dataDirStepsPg },
    { version: 3, name: "leases", sql: leases, postgres: leasesPg },
    { version: 4, name: "instances", sql: instances, postgres: instancesPg },
  ],
};
