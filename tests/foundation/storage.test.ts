/** bun:sqlite in the data dir: pragmas, numbered migrations, the store helper, owner_id everywhere. */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { migrationSets } from "../../server/app.ts";
import { openDatabase } from "../../server/storage/database.ts";
import { MigrationError, type MigrationSet, migrate } from "../../server/storage/migrate.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
afterAll(() => dir.remove());
let n = 0;
const freshDb = () => openDatabase(join(dir.path, `db-${n++}`, "app.db"));

const notes = (sqls: string[]): MigrationSet => ({
  scope: "notes",
  migrations: sqls.map((sql, i) => ({ version: i + 1, name: `step${i + 1}`, sql })),
});

describe("openDatabase", () => {
  test("uses WAL, enforces foreign keys, waits when busy", () => {
    const db = freshDb();
    expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
    expect(db.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys).toBe(1);
    expect(db.query<{ timeout: number }, []>("PRAGMA busy_timeout").get()?.timeout).toBe(5000);
    db.close();
  });

  test("FTS5 is available for text search", () => {
    const db = freshDb();
    db.exec("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'porter')");
    db.query("INSERT INTO t (body) VALUES (?)").run("running foxes");
    expect(db.query("SELECT count(*) AS n FROM t WHERE t MATCH 'run'").get()).toEqual({ n: 1 });
    db.close();
  });
});

describe("migrate", () => {
  test("applies pending migrations once, recording scope, version, name and checksum", () => {
    const db = freshDb();
    const set = notes([
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, owner_id TEXT NOT NULL)",
      "ALTER TABLE notes ADD body TEXT",
    ]);
    expect(migrate(db, [set])).toEqual(["notes/0001_step1", "notes/0002_step2"]);
    expect(migrate(db, [set])).toEqual([]);
    const rows = db
      .query("SELECT scope, version, name, length(checksum) AS len FROM schema_migrations")
      .all();
    expect(rows).toEqual([
      { scope: "notes", version: 1, name: "step1", len: 64 },
      { scope: "notes", version: 2, name: "step2", len: 64 },
    ]);
    db.close();
  });

  test("a failing migration rolls back entirely and stops", () => {
    const db = freshDb();
    const set = notes([
      "CREATE TABLE a (id INTEGER, owner_id TEXT); INSERT INTO a VALUES (1, 'x'); SELECT * FROM missing_table",
    ]);
    expect(() => migrate(db, [set])).toThrow("no such table: missing_table");
    expect(db.query("SELECT name FROM sqlite_master WHERE name = 'a'").all()).toEqual([]);
    expect(db.query("SELECT * FROM schema_migrations").all()).toEqual([]);
    db.close();
  });

  test("an edited migration, a newer database and bad numbering stop startup", () => {
    const db = freshDb();
    migrate(db, [notes(["CREATE TABLE n1 (owner_id TEXT)", "CREATE TABLE n2 (owner_id TEXT)"])]);
    expect(() =>
      migrate(db, [notes(["CREATE TABLE n1 (owner_id TEXT, x INT)", "CREATE TABLE n2 (owner_id TEXT)"])]),
    ).toThrow("notes: migration 1 (step1) changed after it was applied");
    expect(() => migrate(db, [notes(["CREATE TABLE n1 (owner_id TEXT)"])])).toThrow(MigrationError);
    expect(() =>
      migrate(db, [{ scope: "bad", migrations: [{ version: 2, name: "x", sql: "SELECT 1" }] }]),
    ).toThrow("migrations must be numbered 1, 2, 3");
    db.close();
  });

  test("every user-data table of every family carries owner_id", () => {
    const db = freshDb();
    migrate(db, migrationSets());
    // Sign-in data belongs to the users row itself (user_id, deleted with it) or to no one (invites).
    const system = new Set([
      "schema_migrations",
      "users",
      "data_dir_steps",
      "auth_accounts",
      "auth_sessions",
      "auth_invites",
      // Attempt counters keyed by client address, email or owner: no one's data, gone within 15 minutes.
      "auth_limit_hits",
      // Digests of the sandbox provider's webhook bodies: the provider's, not a user's; gone in 10 minutes.
      "sandbox_webhook_seen",
      // Which server instance runs a turn or an index build: the instances', gone when the work ends.
      "leases",
      // The instances of a group and their addresses (home forwarding): the deployment's, not a user's.
      "instances",
    ]);
    const tables = db
      .query<{ name: string }, []>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
      )
      .all()
      .map((r) => r.name)
      // FTS5 shadow tables belong to their virtual table.
      .filter((name) => !/_(data|idx|content|docsize|config)$/.test(name));
    expect(tables).toContain("users");
    for (const name of tables.filter((t) => !system.has(t))) {
      const columns = db
        .query<{ name: string }, []>(`PRAGMA table_info(${JSON.stringify(name)})`)
        .all()
        .map((c) => c.name);
      expect({ table: name, hasOwner: columns.includes("owner_id") }).toEqual({
        table: name,
        hasOwner: true,
      });
    }
    expect(db.query("SELECT id FROM users").all()).toEqual([{ id: "local" }]);
    db.close();
  });
});
