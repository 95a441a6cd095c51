/**
 * `atrium db copy --from <app.db, a data dir or a postgres:// URL> --to <postgres:// URL> [--force]`:
 * moves a deployment's tables into PostgreSQL (storage/db-copy.ts: migrations, every table in
 * foreign-key order, counts and checksums verified, resumable, a non-empty target refused without
 * --force). Progress goes to stderr, one line per table; the summary to stdout. Bad input is one line
 * and exit 2; a refusal or a failed check one line and exit 1. A URL is never repeated (it may hold a
 * password). The data dir's files (workspaces, attachments, sessions) stay where they are: the server
 * started with the same data dir and the new APP_DATABASE_URL uses them.
 */
import { Database } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { migrationSets } from "./app.ts";
import { fromSqliteSet } from "./storage/db/migrate.ts";
import { isPostgresUrl, openDb } from "./storage/db/open.ts";
import type { Db } from "./storage/db/port.ts";
import { sqlitePort } from "./storage/db/sqlite.ts";
import { CopyError, type CopySource, copyDatabase } from "./storage/db-copy.ts";

const USAGE = "usage: atrium db copy --from <app.db | data dir | postgres://…> --to <postgres://…> [--force]";

export interface DbIo {
  out(text: string): void;
  err(text: string): void;
}

const stdio: DbIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

export async function dbCommandMain(argv: string[], io: DbIo = stdio): Promise<number> {
  let values: { from?: string; to?: string; force?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        from: { type: "string" },
        to: { type: "string" },
        force: { type: "boolean" },
        help: { type: "boolean" },
      },
    }));
  } catch (error) {
    io.err(`atrium db: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.out(`${USAGE}\n  copies every table into an empty PostgreSQL database, verified and resumable\n`);
    return 0;
  }
  if (positionals[0] !== "copy" || positionals.length !== 1) {
    io.err(`atrium db: unknown or missing subcommand\n${USAGE}\n`);
    return 2;
  }
  if (!values.from || !values.to) {
    io.err(`atrium db copy: --from and --to are both required\n${USAGE}\n`);
    return 2;
  }
  if (!isPostgresUrl(values.to)) {
    io.err("atrium db copy: --to must be a postgres:// URL\n");
    return 2;
  }
  if (values.from === values.to) {
    io.err("atrium db copy: --from and --to are the same database\n");
    return 2;
  }
  const secrets = [values.from, values.to].filter(isPostgresUrl).flatMap((u) => [u, passwordOf(u)]);
  const clean = (text: string) =>
    secrets.reduce((t, s) => (s ? t.replaceAll(s, "<hidden>") : t), text).split("\n")[0];
  let source: OpenedSource | undefined;
  let target: Db | undefined;
  try {
    source = openSource(values.from);
    target = openDb({ url: values.to, dataDir: "." });
    await reach(target, "the target");
    const sets = migrationSets().map(fromSqliteSet);
    const opened = source;
    const results = await opened.run((s) =>
      copyDatabase(s, target as Db, sets, {
        force: values.force,
        progress: (line) => io.err(`${line}\n`),
      }),
    );
    const rows = results.reduce((n, r) => n + r.rows, 0);
    const again = results.filter((r) => r.how === "verified").length;
    io.out(
      `copied ${results.length} tables, ${rows} rows, counts and checksums verified${again ? ` (${again} copied by an earlier run)` : ""}\n`,
    );
    return 0;
  } catch (error) {
    const known = error instanceof CopyError;
    io.err(`atrium db copy: ${clean(known ? error.message : `failed: ${(error as Error).message}`)}\n`);
    return 1;
  } finally {
    await source?.close().catch(() => {});
    await target?.close().catch(() => {});
  }
}

interface OpenedSource {
  /** Runs the copy over one snapshot of the source. */
  run<T>(fn: (source: CopySource) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

function passwordOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return "";
  }
}

/** The URL as the progress records it: without its password. */
function labelOf(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    return u.toString();
  } catch {
    return "postgres";
  }
}

async function reach(db: Db, what: string): Promise<void> {
  try {
    await db.get("SELECT 1 AS one");
  } catch (error) {
    throw new CopyError(`cannot reach ${what} database: ${(error as Error).message}`);
  }
}

function openSource(from: string): OpenedSource {
  if (isPostgresUrl(from)) {
    const db = openDb({ url: from, dataDir: "." });
    return {
      async run(fn) {
        await reach(db, "the source");
        // One REPEATABLE READ snapshot: every table is read as of the same instant.
        return db.tx(async (tx) => {
          await tx.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
          return fn({ q: tx, engine: "postgres", label: labelOf(from) });
        });
      },
      close: () => db.close(),
    };
  }
  let path = resolve(from);
  if (existsSync(path) && statSync(path).isDirectory()) path = join(path, "app.db");
  if (!existsSync(path) || !statSync(path).isFile()) throw new CopyError(`${from}: no such database file`);
  let db: Database;
  try {
    db = new Database(path, { readonly: true, strict: true });
    db.exec("PRAGMA busy_timeout = 5000");
    db.query("SELECT count(*) FROM sqlite_master").get();
  } catch {
    throw new CopyError(`${from} is not an Atrium database (not a SQLite file)`);
  }
  const opened = db;
  return {
    async run(fn) {
      // A read transaction for the whole copy: one snapshot, while a server may still write (WAL).
      opened.exec("BEGIN");
      try {
        return await fn({ q: sqlitePort(opened), engine: "sqlite", label: path });
      } finally {
        opened.exec("COMMIT");
      }
    },
    async close() {
      opened.close();
    },
  };
}
