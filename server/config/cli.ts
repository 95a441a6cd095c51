/**
 * The command line of `bun server/main.ts`: flags, their defaults, and the help text that documents
 * every flag and environment variable (run.ts adds the subcommands, listed in commands.ts).
 */
import { parseArgs } from "node:util";
import { programName } from "../lib/program.ts";
import { APP_NAME, APP_VERSION } from "../version.ts";
import type { EnvRecord } from "./env.ts";
import { defaultDataDir, defaultPolicyPath } from "./paths.ts";

export interface CliOptions {
  host: string;
  port: number;
  dataDir: string;
  policyPath: string;
  allowNonLoopbackBind: boolean;
  /** `--public-origin` values as given (validated with APP_PUBLIC_ORIGINS by loadConfig). */
  publicOrigins?: string[];
  /** `--trust-proxy` values: proxies whose X-Forwarded-For/-Proto are believed (addresses, CIDRs, `loopback`). */
  trustProxy?: string[];
}

export type CliResult =
  | { kind: "serve"; options: CliOptions }
  | { kind: "help"; text: string }
  | { kind: "version"; text: string }
  | { kind: "error"; message: string };

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 8000;

export function parseCli(argv: string[], env: EnvRecord, cwd: string): CliResult {
  let parsed: ReturnType<typeof parseFlags>;
  try {
    parsed = parseFlags(argv);
  } catch (error) {
    return { kind: "error", message: `${(error as Error).message}. See --help.` };
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: "help", text: helpText(env) };
  if (values.version) return { kind: "version", text: `${APP_NAME} ${APP_VERSION}` };
  if (positionals.length > 0)
    return { kind: "error", message: `unexpected argument '${positionals[0]}'. See --help.` };

  const port =
    values.port === undefined ? DEFAULT_PORT : /^\d{1,5}$/.test(values.port) ? Number(values.port) : -1;
  if (port < 0 || port > 65535) {
    return { kind: "error", message: `--port must be an integer from 0 to 65535, got '${values.port}'` };
  }
  const host = values.host ?? DEFAULT_HOST;
  if (host.trim() === "") return { kind: "error", message: "--host must not be empty" };
  return {
    kind: "serve",
    options: {
      host,
      port,
      dataDir: values["data-dir"] ?? defaultDataDir(env),
      policyPath: values.policy ?? defaultPolicyPath(cwd),
      allowNonLoopbackBind: values["allow-non-loopback-bind"] ?? false,
      publicOrigins: values["public-origin"] ?? [],
      trustProxy: (values["trust-proxy"] ?? []).flatMap((v) => v.split(",")).filter((v) => v.trim() !== ""),
    },
  };
}

function parseFlags(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      host: { type: "string" },
      port: { type: "string" },
      "data-dir": { type: "string" },
      policy: { type: "string" },
      "allow-non-loopback-bind": { type: "boolean" },
      "public-origin": { type: "string", multiple: true },
      "trust-proxy": { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean", short: "v" },
    },
  });
}

function helpText(env: EnvRecord): string {
  return `${APP_NAME} ${APP_VERSION}: a local-first agent server (chat, turns, search, agents) with a chat UI and Swagger UI.

Usage: ${programName()} [flags]
       ${programName()} <command> [args]   (commands below)

Flags:
  --host HOST                  address to listen on (default ${DEFAULT_HOST})
  --port PORT                  port to listen on; 0 picks a free port (default ${DEFAULT_PORT})
  --data-dir DIR               where app.db, sessions and workspaces live
                               (default $APP_DATA_DIR, else $XDG_DATA_HOME/atrium, else ~/.local/share/atrium;
                               here: ${defaultDataDir(env)})
  --policy FILE                runtime policy file (default ./config/policy.toml, else the built-in
                               copy of the committed one)
  --allow-non-loopback-bind    required to listen on anything but loopback (a team server); set the
                               protected-mode variables below when you do
  --public-origin URL          an origin browsers may use to reach this server besides loopback
                               (e.g. https://atrium.example.com); repeatable. Without it the server
                               answers only Host localhost, 127.0.0.1 and [::1] (421 otherwise) and
                               refuses state-changing requests from any other Origin (403)
  --trust-proxy ADDR           a reverse proxy whose X-Forwarded-For / X-Forwarded-Proto are believed
                               (an IP address, a CIDR range or 'loopback'; repeatable). Without it
                               those headers are ignored
  -h, --help                   show this help
  -v, --version                print the version

When listening it prints "listening on http://HOST:PORT", then a line with the UI and Swagger UI
addresses and the data directory.

Environment (read by name; the process environment wins over ./.env):
  APP_DATA_DIR                     default data directory
  APP_LOG_LEVEL                    debug, info (default), warn or error
  APP_CHAT_RUNTIME_REQUIRE_AUTH=1  protected mode: every non-public route needs an identity
  APP_MANAGED_AUTH_URL             managed-auth base URL (bearer JWTs; /api/auth/* is proxied there);
                                   implies protected mode
  APP_MANAGED_AUTH_JWKS_URL        its JWKS (default <APP_MANAGED_AUTH_URL>/.well-known/jwks.json)
  APP_MANAGED_AUTH_ISSUER          the issuer (iss) its tokens must carry
  APP_MANAGED_AUTH_AUDIENCE        the audience (aud) its tokens must carry (required with the URL)
  APP_HOSTED=1                     hosted platform; implies protected mode
  APP_AUTH_SECRET                  enables the built-in session-cookie sign-in (/api/auth/*); keys the
                                   server's HMACs (CSRF tokens, preview URLs); required in protected
                                   mode on PostgreSQL (every instance must share the keys)
  APP_AUTH_SIGNUP                  open, invite (default) or closed: who may create an account
  APP_CHAT_DATABASE_URL            chat mirror database in protected mode (a SQLite path)
  APP_DESKTOP_TOKEN                set by the desktop shell: required on every non-public route
  APP_PUBLIC_ORIGINS               comma-separated public origins, added to --public-origin
  APP_OUTBOUND_ALLOW               comma-separated origins (e.g. http://10.0.0.5:11434) a URL a user
                                   gives (a stored Ollama URL) may reach at a private address
  APP_EXIT_WITH_STDIN=1            set by the desktop shell: stop when stdin closes (the shell is gone)
  APP_SANDBOX_WARM                 Python interpreters kept warm for turns while no one is active
                                   (default: policy runtime.warm_interpreters, 1); 0: none at all
  APP_SANDBOX_SNAPSHOT_DIR         where the interpreters' memory snapshot is cached (default
                                   <data dir>/cache)
  APP_SANDBOX_PROVIDER             local, remote or none: where users' sandboxes run (default: remote
                                   when SANDBOX_API_KEY is set, else the local jail where it works)
  SANDBOX_API_KEY                  selects the remote (Daytona-compatible) provider; SANDBOX_API_URL,
                                   SANDBOX_TARGET name its API and region
  SANDBOX_WEBHOOK_SECRET           verifies POST /api/webhooks/sandbox signatures
  Model providers (a provider counts as configured when its variable is set):
    AWS_ACCESS_KEY_ID (amazon-bedrock)   OPENAI_API_KEY (openai)      ANTHROPIC_API_KEY (anthropic)
    GOOGLE_APPLICATION_CREDENTIALS (google-vertex)   GEMINI_API_KEY (google)   MISTRAL_API_KEY (mistral)
    GROQ_API_KEY (groq)   OLLAMA_BASE_URL (ollama, e.g. http://127.0.0.1:11434)
  With none set, the built-in offline model answers.
  The policy file names further variables (model key and base URL, database URL, tracing, analytics).
`;
}
