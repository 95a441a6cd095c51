/**
 * `atrium migrate`: applies the pending migrations of every scope to the server's database, as startup
 * does: the PostgreSQL database of the policy's `APP_DATABASE_URL` (nothing in the data dir is opened),
 * or without it the embedded `app.db` of the data dir. With `--check` it only reports them. Profiles
 * whose policy says `[database] migrations = "require_head"` never migrate at startup and refuse a
 * database behind the head: this command is how their operator moves it.
 */
import { parseArgs } from "node:util";
import { migrationSets } from "./app.ts";
import { parseCli } from "./config/cli.ts";
import { createEnvSource, readDotenv } from "./config/env.ts";
import { databaseLabel, openCommandDatabase } from "./storage/command-database.ts";
import { applyMigrations, fromSqliteSet, migrationStatus } from "./storage/db/migrate.ts";

const USAGE = "usage: migrate [--check] [--data-dir D] [--policy FILE]";

export interface MigrateIo {
  out(text: string): void;
  err(text: string): void;
}

const stdio: MigrateIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

export async function migrateCommandMain(
  argv: string[],
  io: MigrateIo = stdio,
  env = process.env,
): Promise<number> {
  let values: { check?: boolean; help?: boolean; "data-dir"?: string; policy?: string };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        check: { type: "boolean" },
        help: { type: "boolean" },
        "data-dir": { type: "string" },
        policy: { type: "string" },
      },
    }));
  } catch (error) {
    io.err(`atrium migrate: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.out(`${USAGE}\n  applies pending migrations (--check: lists them, exit 1 when any are pending)\n`);
    return 0;
  }
  const flags = [
    ...(values["data-dir"] ? ["--data-dir", values["data-dir"]] : []),
    ...(values.policy ? ["--policy", values.policy] : []),
  ];
  const cli = parseCli(flags, env, process.cwd());
  if (cli.kind !== "serve") {
    io.err("atrium migrate: the data directory could not be resolved\n");
    return 2;
  }
  const { dataDir, policyPath } = cli.options;
  try {
    const source = createEnvSource(env, readDotenv(process.cwd()));
    const db = openCommandDatabase(policyPath, dataDir, source);
    try {
      const sets = migrationSets().map(fromSqliteSet);
      const name = databaseLabel(db, dataDir);
      if (values.check) {
        const pending = (await migrationStatus(db, sets)).flatMap((s) => s.pending);
        io.out(
          pending.length
            ? `${name}: ${pending.length} pending: ${pending.join(", ")}\n`
            : `${name}: at the head\n`,
        );
        return pending.length > 0 ? 1 : 0;
      }
      const applied = await applyMigrations(db, sets);
      io.out(applied.length ? `${name}: applied ${applied.join(", ")}\n` : `${name}: already at the head\n`);
      return 0;
    } finally {
      await db.close();
    }
  } catch (error) {
    io.err(`atrium migrate: ${(error as Error).message}\n`);
    return 1;
  }
}
