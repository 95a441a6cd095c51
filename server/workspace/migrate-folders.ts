/**
 * The startup migration that gives a data dir written by an earlier build today's per-owner folder
 * names (owner-folders.ts), once, before any family starts (app.ts `compose`).
 *
 * Owner ids come from every table with an `owner_id` column and from `users`; each one's old folder
 * names (legacy-names.ts) that exist are moved to its new name by renames, merging when both exist
 * (turns' `workspaces/<encoded>/files` into chat's `workspaces/=<sha256>/`). A folder that no row names
 * is read back from its old name where that is possible. A folder two owners could own (chat's cut hex
 * names, or an old name that is also another owner's new name) stays where it is, with a warning: moving
 * it to either would hand one owner the other's files.
 *
 * What pi stores about the moved folders is rewritten too: a session file's header names its working
 * directory (`cwd`) and the file it branched from (`parentSession`) by absolute path, and
 * `chat_sessions.session_file` holds the file's absolute path. The runtime opens a session with today's
 * workspace as its cwd whatever the header says; the header is still rewritten so no stale path remains.
 *
 * Crash-safe: every step is a rename (files are rewritten to a temp name, then renamed over) and every
 * step is skipped when already done, so after a crash the next start finishes the job; the step is
 * recorded in `data_dir_steps` only when all of it is done.
 *
 * The rows are read through the database port: the server's one database (app.db, or PostgreSQL).
 */
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Logger } from "../log.ts";
import type { Db } from "../storage/db/port.ts";
import { ownerTables } from "../storage/erase-owner.ts";
import { legacyFolderNames, ownerFromLegacyName } from "./legacy-names.ts";
import { type MergeReport, moveMerging } from "./merge.ts";
import {
  isHashedFolderName,
  OWNER_ROOTS,
  type OwnerRoot,
  ownerFolderName,
  ownerFolders,
} from "./owner-folders.ts";

export const OWNER_FOLDERS_STEP = "owner-folders-1";

export interface FolderMove {
  root: OwnerRoot;
  from: string;
  to: string;
  owner: string;
}

export interface FolderMigration {
  moved: FolderMove[];
  /** Old folders more than one owner could own, left where they are. */
  ambiguous: { root: OwnerRoot; name: string }[];
  /** Entries kept under another name because the target already had one of that name. */
  renamed: MergeReport["renamed"];
  sessionFilesRewritten: number;
  sessionRowsRewritten: number;
}

/** What `compose` needs: the data dir, the database, a logger (the app context has them all). */
export interface FolderMigrationContext {
  config: { dataDir: string };
  /** The database port (app.db's, or PostgreSQL's): the owners' rows and `data_dir_steps`. */
  database: Db;
  log: Logger;
}

/** The startup hook: runs the migration unless this data dir has it recorded. */
export async function migrateOwnerFolders(ctx: FolderMigrationContext): Promise<FolderMigration | undefined> {
  const { config, database, log } = ctx;
  const done = await database.get("SELECT 1 AS done FROM data_dir_steps WHERE name = ?", [
    OWNER_FOLDERS_STEP,
  ]);
  if (done) return undefined;
  const result = await moveOwnerFolders(config.dataDir, database);
  for (const { root, name } of result.ambiguous)
    log.warn("owner folder left in place: more than one owner could own it", { folder: `${root}/${name}` });
  // Counts only: old names spell owner ids (emails, say), and file names are the owners' own.
  if (result.moved.length > 0)
    log.info("owner folders moved to their new names", {
      folders: result.moved.length,
      keptUnderFreeName: result.renamed.length,
      sessionFiles: result.sessionFilesRewritten,
      sessionRows: result.sessionRowsRewritten,
    });
  await database.run("INSERT INTO data_dir_steps (name) VALUES (?) ON CONFLICT DO NOTHING", [
    OWNER_FOLDERS_STEP,
  ]);
  return result;
}

/** The migration itself, without the record: idempotent (a second run finds nothing to do). */
export async function moveOwnerFolders(dataDir: string, db: Db): Promise<FolderMigration> {
  const owners = await ownerIds(db);
  const { moves, ambiguous } = planMoves(dataDir, owners);
  const report: MergeReport = { renamed: [] };
  for (const move of moves)
    moveMerging(join(dataDir, move.root, move.from), join(dataDir, move.root, move.to), report);
  // Owners whose old sessions or workspace folder stayed (another owner could own it) keep old paths.
  const stuck = new Set(
    ambiguous.filter((a) => a.root === "sessions" || a.root === "workspaces").flatMap((a) => a.owners),
  );
  const candidates = new Set([...owners, ...moves.map((m) => m.owner)]);
  let sessionFilesRewritten = 0;
  let sessionRowsRewritten = 0;
  for (const owner of candidates) {
    if (stuck.has(owner)) continue;
    if (legacyFolderNames(owner, "sessions").length + legacyFolderNames(owner, "workspaces").length === 0)
      continue;
    sessionFilesRewritten += rewriteSessionHeaders(dataDir, owner);
    sessionRowsRewritten += await rewriteSessionRows(dataDir, db, owner);
  }
  return {
    moved: moves,
    ambiguous: ambiguous.map(({ root, name }) => ({ root, name })),
    renamed: report.renamed,
    sessionFilesRewritten,
    sessionRowsRewritten,
  };
}

/** Every owner id the database knows: `users.id` and each table's `owner_id` (FTS tables mirror others). */
export async function ownerIds(db: Db): Promise<Set<string>> {
  const owners = new Set<string>();
  const tables = [...(await ownerTables(db, db.engine)).map((t) => ({ t, column: "owner_id" }))];
  if (await hasTable(db, "users")) tables.push({ t: "users", column: "id" });
  for (const { t, column } of tables)
    for (const row of await db.all<{ id: unknown }>(`SELECT DISTINCT ${column} AS id FROM ${quote(t)}`))
      if (typeof row.id === "string") owners.add(row.id);
  return owners;
}

async function hasTable(db: Db, name: string): Promise<boolean> {
  const sql =
    db.engine === "postgres"
      ? "SELECT 1 AS ok FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?"
      : "SELECT 1 AS ok FROM sqlite_master WHERE type = 'table' AND name = ?";
  return (await db.get(sql, [name])) !== undefined;
}

interface Plan {
  moves: FolderMove[];
  ambiguous: { root: OwnerRoot; name: string; owners: string[] }[];
}

/** Which old folders move where; see the module comment for the ones that stay. */
export function planMoves(dataDir: string, owners: Set<string>): Plan {
  const plan: Plan = { moves: [], ambiguous: [] };
  const currentOwner = new Map([...owners].map((o) => [ownerFolderName(o), o]));
  for (const root of OWNER_ROOTS) {
    const present = new Set(listDir(join(dataDir, root)));
    const claims = new Map<string, Set<string>>();
    for (const owner of owners)
      for (const name of legacyFolderNames(owner, root))
        if (present.has(name)) claims.set(name, (claims.get(name) ?? new Set()).add(owner));
    // Folders no row names (chat without its mirror, a turns Files API user without sessions): the
    // owner read back from the old name, where that is possible.
    for (const name of present) {
      if (claims.has(name) || currentOwner.has(name) || isHashedFolderName(name)) continue;
      const owner = ownerFromLegacyName(name, root);
      if (owner !== undefined && legacyFolderNames(owner, root).includes(name))
        claims.set(name, new Set([owner]));
    }
    for (const [name, claimants] of claims) {
      const holder = currentOwner.get(name);
      const all = holder === undefined ? [...claimants] : [...new Set([...claimants, holder])];
      if (all.length > 1) {
        plan.ambiguous.push({ root, name, owners: all });
        continue;
      }
      const owner = all[0] as string;
      plan.moves.push({ root, from: name, to: ownerFolderName(owner), owner });
    }
  }
  return plan;
}

/** Points each session header of `owner` at today's workspace and sessions folder. */
function rewriteSessionHeaders(dataDir: string, owner: string): number {
  const folders = ownerFolders(dataDir, owner);
  const oldWorkspaces = new Set(legacyFolderNames(owner, "workspaces"));
  const oldSessions = new Set(legacyFolderNames(owner, "sessions"));
  let rewritten = 0;
  for (const name of listDir(folders.sessions)) {
    if (!name.endsWith(".jsonl")) continue;
    const file = join(folders.sessions, name);
    const text = readFileSync(file, "utf8");
    const end = text.indexOf("\n");
    const first = end === -1 ? text : text.slice(0, end);
    let header: Record<string, unknown>;
    try {
      header = JSON.parse(first);
    } catch {
      continue; // not a session file pi can read either: left as it is
    }
    if (header?.type !== "session") continue;
    let changed = false;
    const { cwd, parentSession } = header;
    if (typeof cwd === "string" && isIn(cwd, "workspaces", oldWorkspaces)) {
      header.cwd = folders.workspace;
      changed = true;
    }
    if (typeof parentSession === "string" && isIn(dirname(parentSession), "sessions", oldSessions)) {
      header.parentSession = join(folders.sessions, basename(parentSession));
      changed = true;
    }
    if (!changed) continue;
    const temp = `${file}.migrating`;
    writeFileSync(temp, JSON.stringify(header) + (end === -1 ? "" : text.slice(end)), { mode: 0o600 });
    renameSync(temp, file);
    rewritten++;
  }
  return rewritten;
}

/** Points `chat_sessions.session_file` rows of `owner` in an old sessions folder at today's. */
async function rewriteSessionRows(dataDir: string, db: Db, owner: string): Promise<number> {
  if (!(await hasTable(db, "chat_sessions"))) return 0;
  const sessions = ownerFolders(dataDir, owner).sessions;
  const old = new Set(legacyFolderNames(owner, "sessions"));
  const rows = (
    await db.all<{ id: string; session_file: string }>(
      "SELECT id, session_file FROM chat_sessions WHERE owner_id = ?",
      [owner],
    )
  ).filter((r) => r.session_file && isIn(dirname(r.session_file), "sessions", old));
  await db.tx(async (tx) => {
    for (const row of rows)
      await tx.run("UPDATE chat_sessions SET session_file = ? WHERE owner_id = ? AND id = ?", [
        join(sessions, basename(row.session_file)),
        owner,
        row.id,
      ]);
  });
  return rows.length;
}

/** Whether `path` is `<anything>/<root>/<one of names>` (the data dir may have moved since). */
function isIn(path: string, root: string, names: Set<string>): boolean {
  return names.has(basename(path)) && basename(dirname(path)) === root;
}

function listDir(path: string): string[] {
  return existsSync(path) ? readdirSync(path) : [];
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
