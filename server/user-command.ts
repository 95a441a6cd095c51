/**
 * `atrium user ...`: operating a team server's accounts from the command line (works on the compiled
 * binary, against a running server's data dir: SQLite in WAL mode takes the writes beside it; with the
 * policy's APP_DATABASE_URL, on PostgreSQL alone, and no app.db is opened).
 *
 *   user add EMAIL [--name N] [--admin] [--password-stdin]   the first account ever created is an admin
 *   user admin EMAIL [--revoke]                              make (or stop being) an admin
 *   user invite [--admin] [--days N]                         a single-use sign-up code (APP_AUTH_SIGNUP=invite)
 *   user reset-password EMAIL [--password-stdin]             ends every session of the account
 *   user disable EMAIL | user enable EMAIL                   a disabled account cannot sign in; its sandbox stops
 *   user delete EMAIL --yes                                  the account and ALL its data in every family
 *   user list
 *   user token create EMAIL --name N --scope S [--scope S]... [--days N]   an access token for the account
 *   user token list EMAIL | user token revoke EMAIL ID
 *
 * Without --password-stdin a random password is generated and printed once.
 */
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { migrationSets } from "./app.ts";
import { AccessTokens } from "./auth/access-tokens.ts";
import type { AccountRow } from "./auth/account-store.ts";
import { SessionAuth } from "./auth/session-auth.ts";
import { randomPart } from "./auth/tokens.ts";
import { parseCli } from "./config/cli.ts";
import { createEnvSource, readDotenv } from "./config/env.ts";
import { AppError } from "./http/errors.ts";
import { SandboxRegistry } from "./sandbox/users/registry.ts";
import { openCommandDatabase } from "./storage/command-database.ts";
import { applyMigrations, fromSqliteSet } from "./storage/db/migrate.ts";
import { DatabaseUrlError } from "./storage/db/open.ts";
import type { Db } from "./storage/db/port.ts";
import { eraseOwnerRows } from "./storage/erase-owner.ts";
import { MigrationError } from "./storage/migrate.ts";
import { userToken } from "./user-token-command.ts";
import { ownerFolders } from "./workspace/owner-folders.ts";

const USAGE = `usage: atrium user <add|admin|invite|reset-password|disable|enable|delete|list> [args] [--data-dir D]
  add EMAIL [--name N] [--admin] [--password-stdin]
  admin EMAIL [--revoke]
  invite [--admin] [--days N]
  reset-password EMAIL [--password-stdin]
  disable EMAIL | enable EMAIL
  delete EMAIL --yes        (the account and all of its data in every family)
  list
  token create EMAIL --name N --scope S [--scope S]... [--days N]   (printed once)
  token list EMAIL | token revoke EMAIL ID`;

export interface UserCommandIO {
  out(text: string): void;
  err(text: string): void;
  readStdin(): Promise<string>;
}

const processIO: UserCommandIO = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  readStdin: () => Bun.stdin.text(),
};

export async function userCommandMain(
  argv: string[],
  io: UserCommandIO = processIO,
  processEnv: Record<string, string | undefined> = process.env,
): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.err(`atrium user: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [action, first, second, third] = positionals;
  // `user token <create|list|revoke> EMAIL [ID]`: the account comes after the token action.
  const email = action === "token" ? second : first;
  if (!action || values.help) {
    io.out(`${USAGE}\n`);
    return action || values.help ? 0 : 2;
  }
  const cli = parseCli(
    values["data-dir"] ? ["--data-dir", values["data-dir"]] : [],
    processEnv,
    process.cwd(),
  );
  if (cli.kind !== "serve") {
    io.err("atrium user: the data directory could not be resolved\n");
    return 2;
  }
  const { dataDir, policyPath } = cli.options;
  const env = createEnvSource(processEnv, readDotenv(process.cwd()));
  let database: Db;
  try {
    database = openCommandDatabase(policyPath, dataDir, env);
  } catch (error) {
    if (!(error instanceof DatabaseUrlError)) throw error;
    io.err(`atrium user: ${error.message}\n`);
    return 1;
  }
  try {
    await applyMigrations(database, migrationSets().map(fromSqliteSet));
    const auth = new SessionAuth({
      db: database,
      secret: env.get("APP_AUTH_SECRET") ?? "",
      signup: "closed",
    });
    const account = async () => {
      if (!email) throw new AppError("invalid", `${action} needs an EMAIL`);
      const found = await auth.accounts.byEmail(email.trim().toLowerCase());
      if (!found) throw new AppError("not_found", `no account with the email ${email}`);
      return found;
    };
    const password = async () => {
      if (!values["password-stdin"]) return { value: `${randomPart()}${randomPart()}`, generated: true };
      return { value: (await io.readStdin()).replace(/\r?\n$/, ""), generated: false };
    };
    switch (action) {
      case "add": {
        if (!email) throw new AppError("invalid", "add needs an EMAIL");
        const secret = await password();
        const user = await auth.createAccount({
          email,
          password: secret.value,
          name: values.name,
          admin: values.admin,
        });
        io.out(`added ${user.email} (${user.id})${user.admin ? " as an admin" : ""}\n`);
        if (secret.generated) io.out(`password: ${secret.value}\n`);
        return 0;
      }
      case "admin": {
        const found = await account();
        await auth.accounts.update(found.user_id, { admin: !values.revoke });
        io.out(`${found.email} is ${values.revoke ? "no longer" : "now"} an admin\n`);
        return 0;
      }
      case "invite": {
        const days = values.days === undefined ? 7 : Number(values.days);
        if (!Number.isInteger(days) || days < 1 || days > 365)
          throw new AppError("invalid", "--days must be 1..365");
        const invite = await auth.createInvite("cli", { admin: values.admin, lifetimeMs: days * 86_400_000 });
        io.out(
          `invite: ${invite.code}\nexpires: ${invite.expiresAt}${invite.admin ? "\n(an admin invite)" : ""}\n`,
        );
        return 0;
      }
      case "reset-password": {
        const found = await account();
        const secret = await password();
        await auth.setPassword(found.user_id, secret.value);
        io.out(`password of ${found.email} reset; its sessions ended\n`);
        if (secret.generated) io.out(`password: ${secret.value}\n`);
        return 0;
      }
      case "disable":
      case "enable": {
        const found = await account();
        await auth.setDisabled(found.user_id, action === "disable");
        // What the account left running in its sandbox (a server, a loop, with the network the policy
        // gives) must not outlive it: the server stops a sandbox whose record is no longer "started".
        // Enabled again, the next command starts it anew.
        if (action === "disable") await new SandboxRegistry(database).setState(found.user_id, "stopped");
        io.out(`${found.email} ${action}d\n`);
        return 0;
      }
      case "delete": {
        const found = await account();
        if (!values.yes)
          throw new AppError("invalid", `delete erases ${found.email} and all of their data: add --yes`);
        const rows = await eraseOwnerRows(database, found.user_id);
        // Every per-owner folder (workspace with its files, sessions, pi agent dir, attachments, artifacts).
        for (const folder of Object.values(ownerFolders(dataDir, found.user_id))) {
          rmSync(folder, { recursive: true, force: true });
        }
        io.out(`deleted ${found.email} (${found.user_id}): ${summary(rows)}; their folders removed\n`);
        return 0;
      }
      case "list": {
        io.out(table(await auth.accounts.list()));
        return 0;
      }
      case "token": {
        const owner = (await account()).user_id;
        return await userToken(new AccessTokens(database), owner, first, third, values, io);
      }
      default:
        throw new AppError("invalid", `unknown action '${action}'\n${USAGE}`);
    }
  } catch (error) {
    if (error instanceof AppError || error instanceof MigrationError) {
      io.err(`atrium user: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await database.close();
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      "data-dir": { type: "string" },
      name: { type: "string" },
      admin: { type: "boolean" },
      revoke: { type: "boolean" },
      days: { type: "string" },
      scope: { type: "string", multiple: true },
      "password-stdin": { type: "boolean" },
      yes: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

function summary(rows: Record<string, number>): string {
  const parts = Object.entries(rows).map(([table, n]) => `${n} ${table}`);
  return parts.length > 0 ? `${parts.join(", ")} rows` : "no rows";
}

function table(rows: AccountRow[]): string {
  if (rows.length === 0) return "no accounts\n";
  const lines = rows.map((r) =>
    [
      r.email,
      r.user_id,
      r.admin ? "admin" : "member",
      r.disabled_at ? "disabled" : "active",
      r.created_at,
    ].join("\t"),
  );
  return `${["email", "id", "role", "state", "created"].join("\t")}\n${lines.join("\n")}\n`;
}
