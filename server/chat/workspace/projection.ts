/**
 * The workspace projection: a SQLite FTS5 index of the canonical files, kept in
 * `agent-workspace/indexes/workspace-projection.sqlite` (its own file per owner: it is rebuildable and
 * never the source of truth). Reindex walks the workspace (no symlinks, nothing under `indexes/`) and
 * records each text file as an item with a version that changes with its content; it never writes a
 * canonical file. Versions are kept (`item_versions`): an item keeps its id, a change of content adds a
 * version row with that content, and a file that disappears is marked deleted (its history stays) and
 * reactivated when it comes back. Items, one item (with its current version and the list of versions),
 * and ranked search with snippets read the projection.
 */
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import type { Beneath } from "../../workspace/beneath.ts";
import { canonical } from "./contract.ts";
import { MAX_FILE_BYTES } from "./files.ts";

export const PROJECTION_FILE = "indexes/workspace-projection.sqlite";
const IGNORED = new Set([".gitkeep", ".gitignore", ".DS_Store"]);
const MAX_ITEMS = 20_000;
const SEARCH_HITS = 25;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS items (
  id TEXT PRIMARY KEY,
  canonical_path TEXT NOT NULL UNIQUE,
  category TEXT NOT NULL,
  source_of_truth TEXT NOT NULL,
  parser_kind TEXT NOT NULL,
  title TEXT,
  summary TEXT,
  content TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  byte_size INTEGER NOT NULL,
  version INTEGER NOT NULL,
  first_indexed_at TEXT NOT NULL,
  last_indexed_at TEXT NOT NULL,
  last_modified_ms INTEGER NOT NULL,
  deleted_at TEXT
);
CREATE TABLE IF NOT EXISTS item_versions (
  id TEXT PRIMARY KEY,
  item_id TEXT NOT NULL REFERENCES items (id) ON DELETE CASCADE,
  version_number INTEGER NOT NULL,
  parser_version INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  content_text TEXT NOT NULL,
  metadata TEXT NOT NULL,
  indexed_at TEXT NOT NULL,
  UNIQUE (item_id, version_number)
);
CREATE VIRTUAL TABLE IF NOT EXISTS items_fts USING fts5 (
  canonical_path, title, content, content = 'items', content_rowid = 'rowid', tokenize = 'porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS items_ai AFTER INSERT ON items BEGIN
  INSERT INTO items_fts (rowid, canonical_path, title, content) VALUES (new.rowid, new.canonical_path, new.title, new.content);
END;
CREATE TRIGGER IF NOT EXISTS items_ad AFTER DELETE ON items BEGIN
  INSERT INTO items_fts (items_fts, rowid, canonical_path, title, content) VALUES ('delete', old.rowid, old.canonical_path, old.title, old.content);
END;
CREATE TRIGGER IF NOT EXISTS items_au AFTER UPDATE ON items BEGIN
  INSERT INTO items_fts (items_fts, rowid, canonical_path, title, content) VALUES ('delete', old.rowid, old.canonical_path, old.title, old.content);
  INSERT INTO items_fts (rowid, canonical_path, title, content) VALUES (new.rowid, new.canonical_path, new.title, new.content);
END;
-- Projections built before versions were kept: their current content becomes the recorded version.
INSERT OR IGNORE INTO item_versions (id, item_id, version_number, parser_version, content_hash, content_text, metadata, indexed_at)
  SELECT lower(hex(randomblob(16))), id, version, 1, content_hash, content, json_object('byteSize', byte_size, 'parserKind', parser_kind), last_indexed_at
  FROM items WHERE NOT EXISTS (SELECT 1 FROM item_versions v WHERE v.item_id = items.id AND v.version_number = items.version);`;

/** The parsers' version (the reference client's contract starts at 1); recorded with every version row. */
export const PARSER_VERSION = 1;

export interface ItemSummary {
  id: string;
  canonicalPath: string;
  category: string;
  sourceOfTruth: "canonical-files" | "temporary-files";
  parserKind: string;
  title: string | null;
  summary: string | null;
  currentVersionNumber: number;
  currentParserVersion: number;
  lastIndexedAt: string;
  lastModifiedMs: number;
}

interface ItemRow {
  id: string;
  canonical_path: string;
  category: string;
  source_of_truth: "canonical-files" | "temporary-files";
  parser_kind: string;
  title: string | null;
  summary: string | null;
  content: string;
  content_hash: string;
  byte_size: number;
  version: number;
  first_indexed_at: string;
  last_indexed_at: string;
  last_modified_ms: number;
}

export interface ReindexCounts {
  scanned: number;
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
  reactivated: number;
}

const summaryOf = (row: ItemRow): ItemSummary => ({
  id: row.id,
  canonicalPath: row.canonical_path,
  category: row.category,
  sourceOfTruth: row.source_of_truth,
  parserKind: row.parser_kind,
  title: row.title,
  summary: row.summary,
  currentVersionNumber: row.version,
  currentParserVersion: PARSER_VERSION,
  lastIndexedAt: row.last_indexed_at,
  lastModifiedMs: row.last_modified_ms,
});

export const itemId = (canonicalPath: string) =>
  createHash("sha256").update(`workspace-item:${canonicalPath}`).digest("hex");

/**
 * The projection file, beneath the opened agent workspace. SQLite never opens it by name: `indexes/`
 * is in the sandbox's reach, and SQLite's open follows (and re-resolves) names, so a folder swapped for
 * a symlink could have the server create a database outside. The file is read through openat2
 * (server/workspace/beneath.ts: a regular file with one name, at most `PROJECTION_MAX_BYTES`) into an
 * in-memory database, and a rebuild is written back the same way, atomically. It is a rebuildable index
 * of text files, so the whole-file read costs little.
 */
const PROJECTION_MAX_BYTES = 128 * 1024 * 1024;

/** Opens the owner's projection in memory; undefined when there is none yet (and `create` is false). */
function open(aw: Beneath, create: boolean): Database | undefined {
  let bytes: Buffer | undefined;
  try {
    bytes = aw.readFile(PROJECTION_FILE, PROJECTION_MAX_BYTES);
  } catch (error) {
    // Not a projection the server wrote (a link, a pipe, too large): a rebuild starts afresh.
    if (!create) throw error;
  }
  if (!bytes && !create) return undefined;
  const db = bytes
    ? Database.deserialize(bytes, { strict: true })
    : new Database(":memory:", { strict: true });
  db.exec(SCHEMA);
  return db;
}

/** Writes the rebuilt projection back (temp file + rename beneath the opened folder). */
function save(aw: Beneath, db: Database): void {
  aw.writeFile(PROJECTION_FILE, db.serialize());
}

export function projectionExists(aw: Beneath): boolean {
  try {
    return aw.stat(PROJECTION_FILE)?.isFile() === true;
  } catch {
    return false;
  }
}

/** Every indexable file's relative path (regular files only; `indexes/` skipped), listed beneath. */
function walk(aw: Beneath): Set<string> {
  const found = new Set<string>();
  aw.walk("", (relative, name, stat) => {
    if (found.size >= MAX_ITEMS) return "stop";
    const rel = `${relative}${name}`;
    if (rel === "indexes" || IGNORED.has(name)) return false;
    if (stat.isFile()) found.add(rel);
    return stat.isDirectory();
  });
  return found;
}

function categoryOf(rel: string): string {
  if (rel === "manifest.json") return "manifest";
  const top = rel.split("/")[0] as string;
  const byTop: Record<string, string> = {
    memory: "memory",
    plans: "plan",
    skills: "skill",
    evals: "eval",
    artifacts: "artifact",
    pi: "pi-resource",
    scratch: "scratch",
  };
  if (Object.hasOwn(byTop, top)) return byTop[top] as string;
  if (
    top === "system" &&
    /^system\/(workspace-policy|tool-policy|self-improvement-policy|constraints)\.md$/.test(rel)
  )
    return "policy";
  return "unknown";
}

function parserOf(rel: string): string {
  if (rel === "manifest.json") return "manifest-json";
  if (rel.endsWith(".md")) return "markdown";
  if (rel.endsWith(".jsonl")) return "jsonl";
  if (rel.endsWith(".json")) return "json";
  return "text";
}

function titleOf(rel: string, text: string): string | null {
  const heading = text.match(/^#\s+(.+)$/m)?.[1]?.trim();
  return heading ? heading.slice(0, 200) : (rel.split("/").at(-1) ?? null);
}

/** One item as found on disk: new, changed (its version moves on) or unchanged; never deleted. */
const UPSERT = `
INSERT INTO items (id, canonical_path, category, source_of_truth, parser_kind, title, summary, content, content_hash,
  byte_size, version, first_indexed_at, last_indexed_at, last_modified_ms)
VALUES ($id, $canonical_path, $category, $source_of_truth, $parser_kind, $title, $summary, $content, $content_hash,
  $byte_size, $version, $now, $now, $last_modified_ms)
ON CONFLICT (canonical_path) DO UPDATE SET category = excluded.category, source_of_truth = excluded.source_of_truth,
  parser_kind = excluded.parser_kind, title = excluded.title, summary = excluded.summary, content = excluded.content,
  content_hash = excluded.content_hash, byte_size = excluded.byte_size, version = excluded.version,
  last_indexed_at = excluded.last_indexed_at, last_modified_ms = excluded.last_modified_ms, deleted_at = NULL`;

/** Rebuilds the projection from the canonical files (which it only reads). */
export function reindex(aw: Beneath): ReindexCounts {
  const db = open(aw, true) as Database;
  const counts: ReindexCounts = {
    scanned: 0,
    inserted: 0,
    updated: 0,
    unchanged: 0,
    deleted: 0,
    reactivated: 0,
  };
  try {
    const files = walk(aw);
    const now = new Date().toISOString();
    const existing = new Map(
      db
        .query<ItemRow & { deleted_at: string | null }, []>("SELECT * FROM items")
        .all()
        .map((r) => [r.canonical_path, r]),
    );
    const upsert = db.query(UPSERT);
    db.transaction(() => {
      for (const rel of files) {
        counts.scanned++;
        // Read through openat2 beneath the opened folder: the sandbox may swap a folder the walk saw
        // for a symlink, and this read (as root) must not index a host file. A file gone, or no longer
        // a regular file with one name, is skipped; a large one is recorded without its text.
        let stat: ReturnType<Beneath["stat"]>;
        let bytes: Buffer;
        try {
          stat = aw.stat(rel);
          if (!stat?.isFile() || stat.nlink > 1) continue;
          bytes =
            stat.size <= MAX_FILE_BYTES
              ? (aw.readFile(rel, MAX_FILE_BYTES) ?? Buffer.alloc(0))
              : Buffer.alloc(0);
        } catch {
          continue;
        }
        const text = bytes.subarray(0, 8192).includes(0) ? "" : bytes.toString("utf8");
        const hash = createHash("sha256").update(bytes).digest("hex");
        const path = canonical(rel);
        const before = existing.get(path);
        const fields = {
          category: categoryOf(rel),
          source_of_truth: rel.startsWith("scratch/") ? "temporary-files" : "canonical-files",
          parser_kind: parserOf(rel),
          title: titleOf(rel, text),
          summary: text.replace(/\s+/g, " ").trim().slice(0, 240) || null,
          content: text,
          content_hash: hash,
          byte_size: stat.size,
          last_modified_ms: Math.floor(stat.mtimeMs),
        };
        const changed = before?.content_hash !== hash;
        if (!before) counts.inserted++;
        else if (before.deleted_at !== null) counts.reactivated++;
        else if (changed) counts.updated++;
        else counts.unchanged++;
        const version = before ? before.version + (changed ? 1 : 0) : 1;
        upsert.run({ ...fields, id: before?.id ?? itemId(path), canonical_path: path, version, now });
        if (changed) recordVersion(db, before?.id ?? itemId(path), version, fields, now);
      }
      for (const [path, row] of existing) {
        if (row.deleted_at !== null || files.has(path.slice(path.indexOf("/") + 1))) continue;
        db.run("UPDATE items SET deleted_at = ? WHERE canonical_path = ?", [now, path]);
        counts.deleted++;
      }
    })();
    save(aw, db);
    return counts;
  } finally {
    db.close();
  }
}

interface VersionFields {
  content: string;
  content_hash: string;
  byte_size: number;
  parser_kind: string;
  title: string | null;
}

function recordVersion(db: Database, item: string, version: number, fields: VersionFields, now: string) {
  db.run(
    `INSERT INTO item_versions (id, item_id, version_number, parser_version, content_hash, content_text, metadata, indexed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      crypto.randomUUID(),
      item,
      version,
      PARSER_VERSION,
      fields.content_hash,
      fields.content,
      JSON.stringify({ byteSize: fields.byte_size, parserKind: fields.parser_kind, title: fields.title }),
      now,
    ],
  );
}

interface VersionRow {
  id: string;
  version_number: number;
  parser_version: number;
  content_hash: string;
  content_text: string;
  metadata: string;
  indexed_at: string;
}

const versionOf = (row: VersionRow) => ({
  id: row.id,
  versionNumber: row.version_number,
  parserVersion: row.parser_version,
  contentHash: row.content_hash,
  contentText: row.content_text,
  metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  indexedAt: row.indexed_at,
});

export function listItems(aw: Beneath): ItemSummary[] {
  const db = open(aw, false);
  if (!db) return [];
  try {
    return db
      .query<ItemRow, []>("SELECT * FROM items WHERE deleted_at IS NULL ORDER BY canonical_path")
      .all()
      .map(summaryOf);
  } finally {
    db.close();
  }
}

export function getItem(aw: Beneath, id: string) {
  const db = open(aw, false);
  if (!db) return undefined;
  try {
    const row = db
      .query<ItemRow, [string]>("SELECT * FROM items WHERE id = ? AND deleted_at IS NULL")
      .get(id);
    if (!row) return undefined;
    const versions = db
      .query<VersionRow, [string]>(
        "SELECT * FROM item_versions WHERE item_id = ? ORDER BY version_number DESC LIMIT 100",
      )
      .all(id)
      .map(versionOf);
    const current = versions.find((v) => v.versionNumber === row.version) as ReturnType<typeof versionOf>;
    return {
      ...summaryOf(row),
      currentContentHash: row.content_hash,
      byteSize: row.byte_size,
      firstIndexedAt: row.first_indexed_at,
      content: row.content,
      version: current,
      versions: versions.map(({ contentText: _, ...rest }) => rest),
    };
  } finally {
    db.close();
  }
}

/** Ranked hits (BM25, a path match first) with a snippet around the match; at most 25. */
export function search(aw: Beneath, query: string) {
  const terms = query.match(/[\p{L}\p{N}_]+/gu)?.slice(0, 16) ?? [];
  if (terms.length === 0) return [];
  const db = open(aw, false);
  if (!db) return [];
  try {
    const match = terms.map((term) => `"${term}"*`).join(" ");
    const rows = db
      .query<ItemRow & { snippet: string }, [string, number]>(
        `SELECT items.*, snippet(items_fts, 2, '', '', '…', 24) AS snippet FROM items_fts
         JOIN items ON items.rowid = items_fts.rowid
         WHERE items_fts MATCH ? AND items.deleted_at IS NULL
         ORDER BY bm25(items_fts, 10.0, 5.0, 1.0) LIMIT ?`,
      )
      .all(match, SEARCH_HITS);
    return rows.map((row) => ({
      ...summaryOf(row),
      itemId: row.id,
      snippet: row.snippet.replace(/\s+/g, " ").trim(),
    }));
  } finally {
    db.close();
  }
}
