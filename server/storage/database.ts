/**
 * Opens the server's embedded SQLite database (`app.db` in the data dir) with the settings every family
 * relies on: WAL (readers never block the writer), foreign keys enforced, a busy timeout instead of
 * immediate SQLITE_BUSY, and strict bindings (`$name` parameters without the prefix in JS objects).
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
  return db;
}
