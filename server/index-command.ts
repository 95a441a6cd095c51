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
import { createContext } from "./context.ts";
import { createLogger } from "./log.ts";
import { policyEmbeddings } from "./models/embeddings.ts";
import { type IndexTarget, main as indexMain } from "./search/indexing/cli.ts";
import { MigrationError, migrate } from "./storage/migrate.ts";

export async function main(argv: string[]): Promise<number> {
  try {
    return await indexMain(argv, open);
  } catch (error) {
    if (!(error instanceof ConfigError || error instanceof MigrationError)) throw error;
    process.stderr.write(`atrium index: ${error.message}\n`);
    return 1;
  }
}

function open(dataDir: string | undefined): IndexTarget {
  const cwd = process.cwd();
  const cli = parseCli(dataDir === undefined ? [] : ["--data-dir", dataDir], process.env, cwd);
  if (cli.kind !== "serve") throw new ConfigError("the data directory could not be resolved");
  const env = createEnvSource(process.env, readDotenv(cwd));
  const config = loadConfig(cli.options, env);
  const ctx = createContext({ config, env, log: createLogger({ level: config.logLevel }) });
  try {
    migrate(ctx.db, migrationSets());
  } catch (error) {
    ctx.db.close();
    throw error;
  }
  return {
    store: ctx.store,
    models: ctx.models,
    embeddings: policyEmbeddings(config),
    close: () => ctx.db.close(),
  };
}
