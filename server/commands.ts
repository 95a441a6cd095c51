/**
 * Subcommands of the server executable besides serving (`bun server/main.ts <command> ...`): the sandbox
 * worker the server spawns for each interpreter, the search indexer, ... Each loads its module lazily so
 * serving never pays for them, and static imports keep them inside the compiled binary.
 */
export interface Command {
  summary: string;
  /** The subcommand's entry point (each has its own name: exported names are unique across server/). */
  load(): Promise<(argv: string[]) => Promise<number>>;
}

export const COMMANDS: Record<string, Command> = {
  index: {
    summary:
      "build or update a search index from text files: index <files or dirs> [--name N] [--data-dir D]",
    // The app's modules include pi's: pi-package.ts first, as main.ts does for the server.
    load: () =>
      import("./pi-package.ts").then(() => import("./index-command.ts").then((m) => m.indexCommandMain)),
  },
  user: {
    summary:
      "manage accounts of a team server: user add|admin|invite|reset-password|disable|enable|delete|list|token (user --help)",
    // Migrations come from the app's modules, which include pi's: pi-package.ts first, as for index.
    load: () =>
      import("./pi-package.ts").then(() => import("./user-command.ts").then((m) => m.userCommandMain)),
  },
  routes: {
    summary: "every route's method, path, family and source file: routes [--markdown]",
    // The app's modules include pi's: pi-package.ts first, as for index.
    load: () =>
      import("./pi-package.ts").then(() => import("./routes-command.ts").then((m) => m.routesCommandMain)),
  },
  migrate: {
    summary:
      "apply pending database migrations (app.db or APP_DATABASE_URL): migrate [--check] [--data-dir D] [--policy FILE]",
    // The migrations come from the app's modules, which include pi's: pi-package.ts first, as for index.
    load: () =>
      import("./pi-package.ts").then(() => import("./migrate-command.ts").then((m) => m.migrateCommandMain)),
  },
  db: {
    summary:
      "move the database: db copy --from <app.db | data dir | postgres://…> --to <postgres://…> [--force]",
    // The migrations come from the app's modules, which include pi's: pi-package.ts first, as for index.
    load: () => import("./pi-package.ts").then(() => import("./db-command.ts").then((m) => m.dbCommandMain)),
  },
  backup: {
    summary: "a consistent copy of a (running) server's data: backup DIR [--data-dir D]",
    load: () => import("./backup-command.ts").then((m) => m.backupCommandMain),
  },
  turns: {
    summary: "the terminal client of the turns family: turns [-m TEXT [--json]] [--session ID] [--url URL]",
    load: () => import("../cli/turns/command.ts").then((m) => m.main),
  },
  chat: {
    summary:
      "the terminal client of the chat family: chat [-m TEXT [--json]] [--session ID] [--model KEY] [--url URL]",
    load: () => import("../cli/chat/command.ts").then((m) => m.main),
  },
  login: {
    summary: "sign in to a team server and keep its session token: login --url URL [--email E] [--sign-out]",
    load: () => import("../cli/login.ts").then((m) => m.main),
  },
  token: {
    summary:
      "your personal access tokens on a team server: token create --name N --scope S [--days N] | list | revoke ID [--url URL]",
    load: () => import("../cli/token.ts").then((m) => m.main),
  },
  mcp: {
    summary:
      "Atrium's MCP server on stdin/stdout, forwarding to a server's /mcp: mcp [--url URL] (APP_TOKEN)",
    load: () => import("../cli/mcp.ts").then((m) => m.main),
  },
  sandbox: {
    summary: "one pyodide interpreter speaking JSON lines on stdin/stdout (spawned by the server)",
    load: () => import("./sandbox/worker.ts").then((m) => m.interpreterWorkerMain),
  },
  parse: {
    summary:
      "read one document's text (pdf or html on stdin) within caps, for indexing (spawned by the server)",
    load: () => import("./search/indexing/parse-worker.ts").then((m) => m.parseWorkerMain),
  },
  "sandbox-runner": {
    summary:
      "the command runner of a user's long-lived sandbox, JSON lines on stdin/stdout (spawned by the server)",
    load: () => import("./sandbox/users/runner.ts").then((m) => m.sandboxRunnerMain),
  },
};

/** The subcommand named by the first argument, if any. */
export function commandOf(argv: string[]): { name: string; command: Command } | undefined {
  const name = argv[0];
  if (name === undefined || !Object.hasOwn(COMMANDS, name)) return undefined;
  return { name, command: COMMANDS[name] as Command };
}

/** The Commands section of `--help` (run.ts appends it to the flags' help). */
export function commandsHelp(): string {
  const names = Object.keys(COMMANDS);
  const width = Math.max(...names.map((name) => name.length)) + 2;
  const lines = names.map((name) => `  ${name.padEnd(width)}${COMMANDS[name]?.summary}`);
  return `Commands:\n${lines.join("\n")}\n`;
}
