/**
 * The `index` subcommand: the search family's indexer (search/indexing/cli.ts) over the app's own start-up:
 * the server's configuration for the data dir (policy, .env), its context, and every family's migrations,
 * so an index built here is what a server on the same data dir serves. commands.ts loads it after
 * pi-package.ts, as main.ts does the server (the app's modules include pi's).
 */
import { migrationSets } from "./app.ts";
import { parseCli } from "./config/cli.ts";
import { createEnvSource, readDotenv } from "./config/env.ts";
import { ConfigError, loadConfig } from "./config/index.ts";
import { createContext, startupDatabases } from "./context.ts";
import { createLogger } from "./log.ts";
import { policyEmbeddings } from "./models/embeddings.ts";
import { type IndexReader, type IndexTarget, indexCliMain } from "./search/indexing/cli.ts";
import { DocumentParser, parseLimitsFromPolicy } from "./search/indexing/parser.ts";
import { MigrationError } from "./storage/migrate.ts";
import { migrateAtStartup } from "./storage/startup-migrations.ts";

export async function indexCommandMain(argv: string[]): Promise<number> {
  try {
    return await indexCliMain(argv, open, reader);
  } catch (error) {
    if (!(error instanceof ConfigError || error instanceof MigrationError)) throw error;
    process.stderr.write(`atrium index: ${error.message}\n`);
    return 1;
  }
}

/** The server's configuration for the data dir (nothing is opened or written). */
function configure(dataDir: string | undefined) {
  const cwd = process.cwd();
  const cli = parseCli(dataDir === undefined ? [] : ["--data-dir", dataDir], process.env, cwd);
  if (cli.kind !== "serve") throw new ConfigError("the data directory could not be resolved");
  const env = createEnvSource(process.env, readDotenv(cwd));
  return { config: loadConfig(cli.options, env), env };
}

/** PDF and HTML are read as the server reads them: a bounded, jailed subprocess per document. */
function reader(dataDir: string | undefined): IndexReader {
  const { config } = configure(dataDir);
  const limits = parseLimitsFromPolicy(config.policy.settings);
  return {
    reader: new DocumentParser(limits, {
      keepOut: [config.dataDir],
      uidBase: config.policy.settings.sandbox.uid_base,
    }),
    parallel: limits.parallel,
  };
}

/** The data dir's database as the server opens it (app.db, or PostgreSQL from APP_DATABASE_URL), migrated. */
async function open(dataDir: string | undefined): Promise<IndexTarget> {
  const { config, env } = configure(dataDir);
  const ctx = createContext({ config, env, log: createLogger({ level: config.logLevel }) });
  const close = async () => {
    if (ctx.database.engine === "postgres") await ctx.database.close();
    ctx.db?.close();
  };
  try {
    await migrateAtStartup(startupDatabases(ctx), migrationSets());
  } catch (error) {
    await close();
    throw error;
  }
  return {
    database: ctx.database,
    sqlite: ctx.db,
    models: ctx.models,
    embeddings: policyEmbeddings(config),
    close,
  };
}
