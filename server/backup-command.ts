/**
 * `atrium backup DIR [--data-dir D]`: a consistent copy of a (possibly running) server's data. On the
 * embedded engine the database is copied with SQLite's `VACUUM INTO`, which reads one snapshot inside a
 * transaction (WAL readers never block the server's writer), into DIR/app.db; then every other file of
 * the data dir is copied beside it (sessions, workspaces, attachments, artifacts, pi agent dirs). Files a
 * user changes during the copy may be newer than the snapshot; the database is what stays consistent.
 *
 * Users' sandboxes write the workspaces, and may do so while the backup runs: they can leave named pipes
 * and sockets there (and a data dir may hold devices), which a copy cannot carry and must not open (a
 * pipe's open waits for a writer). Those are skipped and listed, not a reason to stop with half a copy.
 * The tree is read the way the server reads workspaces (server/workspace/beneath.ts): each folder
 * through a descriptor, each file opened beneath the data dir without following any symlink and only
 * when it is a regular file, so a folder swapped for a link to `/etc` mid-copy never puts host files
 * into the backup (that entry is listed as changed instead). Symlinks are kept as links, their text as
 * it is.
 *
 * With the policy's APP_DATABASE_URL the database is PostgreSQL, into DIR/postgres.sql
 * (storage/postgres-backup.ts: `pg_dump` when on PATH, else an export of one snapshot), and the data dir
 * holds files only: no app.db is opened or copied (one left from before the move is not the server's).
 *
 * Restore: stop the server, then use DIR as the data dir (`--data-dir DIR`) or copy its contents into an
 * empty data dir; on PostgreSQL, load DIR/postgres.sql into an empty database (`psql URL -f
 * DIR/postgres.sql`) and point APP_DATABASE_URL at it.
 */
import { Database } from "bun:sqlite";
import {
  chmodSync,
  existsSync,
  lchownSync,
  lutimesSync,
  mkdirSync,
  readdirSync,
  type Stats,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { migrationSets } from "./app.ts";
import { parseCli } from "./config/cli.ts";
import { createEnvSource, readDotenv } from "./config/env.ts";
import { policyDatabaseUrl } from "./storage/command-database.ts";
import { fromSqliteSet } from "./storage/db/migrate.ts";
import { openDb } from "./storage/db/open.ts";
import { backupPostgres, type PostgresBackup } from "./storage/postgres-backup.ts";
import { Beneath } from "./workspace/beneath.ts";

const DATABASE_FILES = new Set(["app.db", "app.db-wal", "app.db-shm", "app.db-journal"]);

export async function backupCommandMain(argv: string[]): Promise<number> {
  let values: { "data-dir"?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: { "data-dir": { type: "string" } },
    }));
  } catch (error) {
    process.stderr.write(
      `atrium backup: ${(error as Error).message}\nusage: atrium backup DIR [--data-dir D]\n`,
    );
    return 2;
  }
  const [target] = positionals;
  if (!target || positionals.length > 1) {
    process.stderr.write("usage: atrium backup DIR [--data-dir D]\n");
    return 2;
  }
  const cli = parseCli(
    values["data-dir"] ? ["--data-dir", values["data-dir"]] : [],
    process.env,
    process.cwd(),
  );
  if (cli.kind !== "serve") return 2;
  try {
    const skipped: Skipped[] = [];
    const { dataDir, policyPath } = cli.options;
    const url = policyDatabaseUrl(
      policyPath,
      dataDir,
      createEnvSource(process.env, readDotenv(process.cwd())),
    );
    const { copied, postgres } = await backupAll(dataDir, target, {
      url,
      skip: (entry) => skipped.push(entry),
    });
    process.stdout.write(`backed up ${dataDir} to ${resolve(target)} (database + ${copied} entries)\n`);
    if (postgres)
      process.stdout.write(
        `PostgreSQL: ${postgres.tables} tables, ${postgres.rows} rows into ${postgres.file} (${postgres.method === "pg_dump" ? "pg_dump" : "one-snapshot export"})\n`,
      );
    if (skipped.length > 0) {
      process.stdout.write(`skipped ${skipped.length} entries that a backup cannot copy:\n`);
      for (const entry of skipped) process.stdout.write(`  ${entry.path} (${entry.kind})\n`);
    }
    return 0;
  } catch (error) {
    process.stderr.write(`atrium backup: ${(error as Error).message}\n`);
    return 1;
  }
}

/** An entry of the data dir left out of the backup, and why. */
export interface Skipped {
  /** Relative to the data dir. */
  path: string;
  kind: "named pipe" | "socket" | "device" | "changed during the copy";
}

/**
 * The whole backup: the data dir (`backup`, with app.db when there is no URL), then with a database URL
 * its PostgreSQL tables into `target/postgres.sql`.
 */
export async function backupAll(
  dataDir: string,
  target: string,
  options: { url?: string; usePgDump?: boolean; skip?: (entry: Skipped) => void } = {},
): Promise<{ copied: number; postgres?: PostgresBackup }> {
  // The URL is checked before anything is written (a wrong one leaves no half backup behind).
  const db = options.url ? openDb({ url: options.url, dataDir }) : undefined;
  try {
    const copied = backup(dataDir, target, options.skip, { appDb: !db });
    if (!db || !options.url) return { copied };
    const sets = migrationSets().map(fromSqliteSet);
    const postgres = await backupPostgres(db, options.url, join(resolve(target), "postgres.sql"), sets, {
      usePgDump: options.usePgDump,
    });
    return { copied, postgres };
  } finally {
    await db?.close();
  }
}

/**
 * Copies `dataDir` into the new or empty directory `target`; returns how many top-level entries besides
 * the database. Pipes, sockets and devices are not copied: each goes to `skip`. `appDb: false` (the
 * database is PostgreSQL) copies the files alone: the data dir need not hold an app.db, and one that is
 * there is left out.
 */
export function backup(
  dataDir: string,
  target: string,
  skip: (entry: Skipped) => void = () => {},
  { appDb = true }: { appDb?: boolean } = {},
): number {
  const source = resolve(dataDir);
  const destination = resolve(target);
  if (appDb && !existsSync(join(source, "app.db")))
    throw new Error(`${source} holds no app.db: not a data dir`);
  if (!statSync(source, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`${source} is not a data dir`);
  if (destination === source || destination.startsWith(`${source}/`)) {
    throw new Error("the backup directory must be outside the data dir");
  }
  if (existsSync(destination) && readdirSync(destination).length > 0) {
    throw new Error(`${destination} is not empty`);
  }
  mkdirSync(destination, { recursive: true, mode: 0o700 });
  if (appDb) {
    const db = new Database(join(source, "app.db"), { readonly: true });
    try {
      db.exec("PRAGMA busy_timeout = 5000");
      db.run("VACUUM INTO ?", [join(destination, "app.db")]);
    } finally {
      db.close();
    }
  }
  const tree = new Beneath(source);
  const folders: [string, Stats][] = [];
  const copy = (path: string, stat: Stats): boolean => {
    const into = join(destination, path);
    try {
      if (stat.isDirectory()) {
        mkdirSync(into, { mode: 0o700 });
        folders.push([path, stat]);
        for (const entry of listing(tree, path)) copy(`${path}/${entry.name}`, entry.stat);
        return true;
      }
      if (stat.isSymbolicLink()) symlinkSync(tree.readLink(path), into);
      else if (stat.isFile()) {
        const bytes = tree.readFile(path);
        if (bytes === undefined) throw Object.assign(new Error("gone"), { code: "ENOENT" });
        writeFileSync(into, bytes, { mode: 0o600 });
      } else {
        skip({ path, kind: specialKind(stat) });
        return false;
      }
      keepMetadata(into, stat);
      return true;
    } catch (error) {
      if (!changedMeanwhile(error)) throw error;
      skip({ path, kind: "changed during the copy" });
      return false;
    }
  };
  let copied = 0;
  for (const entry of listing(tree, "")) {
    if (!DATABASE_FILES.has(entry.name) && copy(entry.name, entry.stat)) copied++;
  }
  // Folders last, deepest first: their modes may forbid writing into them, and copying changed their times.
  for (const [path, stat] of folders.reverse()) keepMetadata(join(destination, path), stat);
  return copied;
}

/** A folder's entries; listed again when one vanishes between the listing and its lstat (a busy sandbox). */
function listing(tree: Beneath, path: string): { name: string; stat: Stats }[] {
  for (let attempt = 1; ; attempt++) {
    try {
      return tree.entries(path);
    } catch (error) {
      if (attempt >= 3 || (error as { code?: string }).code !== "ENOENT") throw error;
    }
  }
}

function specialKind(stat: Stats): Skipped["kind"] {
  if (stat.isFIFO()) return "named pipe";
  if (stat.isSocket()) return "socket";
  return "device";
}

/** The entry vanished, became a link or another kind of file between the listing and the copy. */
function changedMeanwhile(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  // EINVAL: a name listed as a link is something else by the time it is read.
  return ["ENOENT", "ELOOP", "EXDEV", "ENOTREG", "EISDIR", "EINVAL"].includes(code ?? "");
}

/** Mode, owner (when root) and times of the original. */
function keepMetadata(path: string, stat: Stats): void {
  if (process.getuid?.() === 0) lchownSync(path, stat.uid, stat.gid);
  if (!stat.isSymbolicLink()) chmodSync(path, stat.mode & 0o7777);
  lutimesSync(path, stat.atime, stat.mtime);
}
