/**
 * What `bun server/main.ts [flags]` does (see --help): load configuration, start the server, print
 * `listening on http://HOST:PORT` (the first line, which supervisors and scripts read) and a line saying
 * where the UI, Swagger UI and the data are, and shut down cleanly on SIGINT/SIGTERM. Configuration and
 * startup errors print one line and give a non-zero exit code.
 */
import type { AnyElysia } from "elysia";
import { authNotes, authStartError } from "./auth/notes.ts";
import { commandsHelp } from "./commands.ts";
import { parseCli } from "./config/cli.ts";
import { createEnvSource, readDotenv } from "./config/env.ts";
import { ConfigError, loadConfig, secretValues } from "./config/index.ts";
import type { AppContext } from "./context.ts";
import { startServer } from "./lifecycle.ts";
import { createLogger } from "./log.ts";
import { secretVarNames } from "./models/catalog.ts";
import { DatabaseUrlError } from "./storage/db/open.ts";
import { MigrationError } from "./storage/migrate.ts";

/** Set by a supervisor that holds our stdin: its closing means the supervisor is gone. */
export const EXIT_WITH_STDIN = "APP_EXIT_WITH_STDIN";

export interface ServerRunOptions {
  /** Extra route plugins (test fixtures mount probe routes this way). */
  plugins?: ((ctx: AppContext) => AnyElysia)[];
}

/** Runs the server until a signal stops it; resolves with the process exit code. */
export async function run(argv: string[], options: ServerRunOptions = {}): Promise<number> {
  const cli = parseCli(argv, process.env, process.cwd());
  if (cli.kind === "help") {
    process.stdout.write(`${cli.text}\n${commandsHelp()}`);
    return 0;
  }
  if (cli.kind === "version") {
    process.stdout.write(`${cli.text}\n`);
    return 0;
  }
  if (cli.kind === "error") {
    process.stderr.write(`atrium: ${cli.message}\n`);
    return 2;
  }
  const env = createEnvSource(process.env, readDotenv(process.cwd()));
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(cli.options, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`atrium: ${error.message}\n`);
    return 1;
  }
  const refused = authStartError(config);
  if (refused) {
    process.stderr.write(`atrium: ${refused}\n`);
    return 1;
  }
  const secrets = secretValues(config, env, [
    ...secretVarNames(),
    "SANDBOX_API_KEY",
    "SANDBOX_WEBHOOK_SECRET",
  ]);
  const log = createLogger({ level: config.logLevel, secrets });
  for (const note of authNotes(config)) log.warn(note);

  // Handlers go in before the port is bound, so a signal during startup also ends in a clean stop.
  const signalled = new Promise<string>((resolve) => {
    // Handlers stay installed (`on`, not `once`): libraries such as pi's file locks (signal-exit) re-raise
    // a signal when they find themselves its only listener, which would kill us mid-drain.
    process.on("SIGINT", () => resolve("SIGINT"));
    process.on("SIGTERM", () => resolve("SIGTERM"));
    // A supervisor (the desktop shell) keeps our stdin open while it lives: when it dies, even by
    // SIGKILL, the pipe closes and we stop instead of lingering as an orphan.
    if (env.get(EXIT_WITH_STDIN) === "1") {
      process.stdin.on("end", () => resolve("stdin closed"));
      process.stdin.on("close", () => resolve("stdin closed"));
      process.stdin.resume();
    }
  });

  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({
      config,
      env,
      log,
      plugins: options.plugins,
      onListening: (url) => process.stdout.write(listeningLines(url, config.dataDir)),
    });
  } catch (error) {
    if (error instanceof MigrationError) {
      process.stderr.write(`atrium: database migration failed: ${error.message}\n`);
      return 1;
    }
    if (error instanceof DatabaseUrlError) {
      process.stderr.write(`atrium: ${error.message}\n`);
      return 1;
    }
    const code = (error as { code?: string }).code;
    if (code === "EADDRINUSE") {
      process.stderr.write(
        `atrium: ${cli.options.host}:${cli.options.port} is already in use (another Atrium?). Stop it, or pass --port 0 to take a free port (--port P for another one).\n`,
      );
      return 1;
    }
    throw error;
  }
  log.info("ready", {
    url: server.url,
    mode: config.mode,
    profile: config.policy.profile,
    dataDir: config.dataDir,
  });

  const signal = await signalled;
  log.info("shutting down", { signal });
  try {
    await server.stop();
    return 0;
  } catch (error) {
    log.error("shutdown failed", { error });
    return 1;
  }
}

/** What the server prints once its port is bound: the listening line first, then where to go next. */
export function listeningLines(url: string, dataDir: string): string {
  return `listening on ${url}\nUI ${url}/app/ · Swagger UI ${url}/swagger/ · data in ${dataDir}\n`;
}
