/**
 * `atrium backup DIR [--data-dir D]`: a consistent copy of a (possibly running) server's data. The
 * database is copied with SQLite's `VACUUM INTO`, which reads one snapshot inside a transaction (WAL
 * readers never block the server's writer), into DIR/app.db; then every other file of the data dir is
 * copied beside it (sessions, workspaces, attachments, artifacts, pi agent dirs). Files a user changes
 * during the copy may be newer than the snapshot; the database is what stays consistent.
 *
 * Restore: stop the server, then use DIR as the data dir (`--data-dir DIR`) or copy its contents into an
 * empty data dir.
 */
import { Database } from "bun:sqlite";
import { cpSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parseCli } from "./config/cli.ts";

const DATABASE_FILES = new Set(["app.db", "app.db-wal", "app.db-shm", "app.db-journal"]);

export async function main(argv: string[]): Promise<number> {
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
    const copied = backup(cli.options.dataDir, target);
    process.stdout.write(
      `backed up ${cli.options.dataDir} to ${resolve(target)} (database + ${copied} entries)\n`,
    );
    return 0;
  } catch (error) {
    process.stderr.write(`atrium backup: ${(error as Error).message}\n`);
    return 1;
  }
}

/** Copies `dataDir` into the new or empty directory `target`; returns how many top-level entries besides the database. */
export function backup(dataDir: string, target: string): number {
  const source = resolve(dataDir);
  const destination = resolve(target);
  if (!existsSync(join(source, "app.db"))) throw new Error(`${source} holds no app.db: not a data dir`);
  if (destination === source || destination.startsWith(`${source}/`)) {
    throw new Error("the backup directory must be outside the data dir");
  }
  if (existsSync(destination) && readdirSync(destination).length > 0) {
    throw new Error(`${destination} is not empty`);
  }
  mkdirSync(destination, { recursive: true, mode: 0o700 });
  const db = new Database(join(source, "app.db"), { readonly: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    db.run("VACUUM INTO ?", [join(destination, "app.db")]);
  } finally {
    db.close();
  }
  let copied = 0;
  for (const entry of readdirSync(source)) {
    if (DATABASE_FILES.has(entry)) continue;
    cpSync(join(source, entry), join(destination, basename(entry)), {
      recursive: true,
      preserveTimestamps: true,
    });
    copied++;
  }
  return copied;
}
