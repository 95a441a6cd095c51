/**
 * Opens the server's embedded SQLite database (`app.db` in the data dir) with the settings every family
 * relies on: WAL (readers never block the writer), foreign keys enforced, a busy timeout instead of
 * immediate SQLITE_BUSY, strict bindings (`$name` parameters without the prefix in JS objects), and reads
 * through a memory map: a read-heavy query (search's local context touches a few hundred rows across
 * five tables) then reads pages in place instead of copying each through a system call, which measured
 * about twice as fast at 100k entities (docs/benchmarks.md#search). Writes still go through the WAL.
 */
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

export function openDatabase(path: string): Database {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA synchronous = NORMAL");
  // Address space, not memory: only the pages read are resident, and the OS may drop them at will.
  if (path !== ":memory:") db.exec("PRAGMA mmap_size = 1073741824");
  return db;
}
