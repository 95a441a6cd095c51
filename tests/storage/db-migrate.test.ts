/**
 * The per-engine migration runner (server/storage/db/migrate.ts) over fixture migrations
 * (tests/fixtures/migrations/notes: NNNN_name.sql beside NNNN_name.pg.sql), on SQLite and PostgreSQL.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../../server/storage/database.ts";
import { isForeignKeyViolation } from "../../server/storage/db/dialect.ts";
import {
  applyMigrations,
  fromSqliteSet,
  loadMigrationDir,
  migrationStatus,
  type PortMigrationSet,
  requireMigrationHead,
} from "../../server/storage/db/migrate.ts";
import { openDb } from "../../server/storage/db/open.ts";
import type { Db } from "../../server/storage/db/port.ts";
import { MigrationError, migrate } from "../../server/storage/migrate.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/tmp.ts";

const FIXTURE = join(import.meta.dir, "../fixtures/migrations/notes");
const notes = () => loadMigrationDir("notes", FIXTURE);
const firstOnly = (): PortMigrationSet => ({ scope: "notes", migrations: notes().migrations.slice(0, 1) });

for (const engine of ["sqlite", "postgres"] as const) {
  describe(`migrations on ${engine}`, () => {
    const dir = tempDir("atrium-db-migrate-");
    let db: Db;
    let n = 0;

    // A fresh database per test: each starts from an empty schema.
    beforeEach(async () => {
      await db?.close();
      const url = engine === "postgres" ? await freshPostgresDatabase() : undefined;
      db = openDb({ url, dataDir: join(dir.path, `d${++n}`) });
    });
    afterAll(async () => {
      await db.close();
      dir.remove();
    });

    test("applies the engine's own files in order, once, and records their checksums", async () => {
      expect(notes().migrations.map((m) => [m.version, m.name, m.postgres !== undefined])).toEqual([
        [1, "notes", true],
        [2, "tags", true],
      ]);
      expect(await applyMigrations(db, [notes()])).toEqual(["notes/0001_notes", "notes/0002_tags"]);
      expect(await applyMigrations(db, [notes()])).toEqual([]);
      const note = await db.get<{ id: number; created_at: string }>(
        "INSERT INTO fixture_notes (owner_id, title) VALUES (?, ?) RETURNING id, created_at",
        ["u1", "hello"],
      );
      expect(typeof note?.id).toBe("number");
      expect(note?.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // The foreign key of 0002 holds on both engines.
      const orphan = await db
        .run("INSERT INTO fixture_tags (note_id, tag) VALUES (?, ?)", [999, "x"])
        .catch((e) => e);
      expect(isForeignKeyViolation(orphan)).toBe(true);
      const rows = await db.all<{ version: number; name: string; checksum: string }>(
        "SELECT version, name, checksum FROM schema_migrations WHERE scope = ? ORDER BY version",
        ["notes"],
      );
      expect(rows.map((r) => [r.version, r.name, r.checksum.length])).toEqual([
        [1, "notes", 64],
        [2, "tags", 64],
      ]);
    });

    test("behind the head: status lists what is pending, require_head refuses with the fix, migrate clears it", async () => {
      await applyMigrations(db, [firstOnly()]);
      expect(await migrationStatus(db, [notes()])).toEqual([
        { scope: "notes", applied: 1, pending: ["notes/0002_tags"] },
      ]);
      const refused = await requireMigrationHead(db, [notes()]).catch((e: Error) => e);
      expect(refused).toBeInstanceOf(MigrationError);
      expect((refused as Error).message).toContain("notes/0002_tags");
      expect((refused as Error).message).toContain("atrium migrate");
      // Refusing changed nothing.
      expect((await migrationStatus(db, [notes()]))[0]?.pending).toEqual(["notes/0002_tags"]);
      await applyMigrations(db, [notes()]);
      expect(await requireMigrationHead(db, [notes()])).toBeUndefined();
    });

    test("an applied migration edited afterwards, or one this build does not know, stops it", async () => {
      await applyMigrations(db, [notes()]);
      const edited = notes();
      const first = edited.migrations[0] as { sqlite: string; postgres?: string };
      first.sqlite += "\n-- edited";
      first.postgres += "\n-- edited";
      await expect(applyMigrations(db, [edited])).rejects.toThrow(
        "notes: migration 1 (notes) changed after it was applied",
      );
      await expect(migrationStatus(db, [firstOnly()])).rejects.toThrow("written by a newer version");
    });

    test("a failing migration leaves nothing behind and is not recorded", async () => {
      const broken: PortMigrationSet = {
        scope: "notes",
        migrations: [
          ...notes().migrations,
          {
            version: 3,
            name: "broken",
            sqlite: "CREATE TABLE half (a TEXT); SELEC nonsense;",
            postgres: "CREATE TABLE half (a TEXT); SELEC nonsense;",
          },
        ],
      };
      await expect(applyMigrations(db, [broken])).rejects.toThrow();
      const status = await migrationStatus(db, [broken]);
      expect(status[0]).toEqual({ scope: "notes", applied: 2, pending: ["notes/0003_broken"] });
      await expect(db.get("SELECT count(*) AS n FROM half")).rejects.toThrow();
    });

    test("two runners at once apply each migration once", async () => {
      const [a, b] = await Promise.all([applyMigrations(db, [notes()]), applyMigrations(db, [notes()])]);
      expect([...a, ...b].sort()).toEqual(["notes/0001_notes", "notes/0002_tags"]);
      const count = await db.get<{ n: number }>(
        "SELECT count(*) AS n FROM schema_migrations WHERE scope = ?",
        ["notes"],
      );
      expect(count?.n).toBe(2);
    });

    test("a scope listed twice or numbered with a gap is refused", async () => {
      await expect(applyMigrations(db, [notes(), notes()])).rejects.toThrow("listed twice");
      const gap = {
        scope: "notes",
        migrations: [{ ...(notes().migrations[1] as PortMigrationSet["migrations"][0]) }],
      };
      await expect(applyMigrations(db, [gap])).rejects.toThrow("numbered 1, 2, 3");
    });
  });
}

describe("migrations: engines and the existing runner", () => {
  const dir = tempDir("atrium-db-migrate-compat-");
  afterAll(() => dir.remove());

  test("a scope without PostgreSQL files is refused on PostgreSQL by name", async () => {
    const db = openDb({ url: await freshPostgresDatabase(), dataDir: dir.path });
    try {
      const sqliteOnly = fromSqliteSet({
        scope: "legacy",
        migrations: [{ version: 1, name: "t", sql: "CREATE TABLE t (a TEXT)" }],
      });
      await expect(applyMigrations(db, [sqliteOnly])).rejects.toThrow("0001_t.pg.sql");
    } finally {
      await db.close();
    }
  });

  test("an app.db migrated by storage/migrate.ts is at the head for the new runner", async () => {
    const set = notes();
    const path = join(dir.path, "old", "app.db");
    const old = openDatabase(path);
    migrate(old, [
      {
        scope: "notes",
        migrations: set.migrations.map((m) => ({ version: m.version, name: m.name, sql: m.sqlite })),
      },
    ]);
    old.close();
    const db = openDb({ dataDir: join(dir.path, "old") });
    try {
      expect(await requireMigrationHead(db, [set])).toBeUndefined();
      expect(await applyMigrations(db, [set])).toEqual([]);
    } finally {
      await db.close();
    }
  });

  test("a .pg.sql without its SQLite twin is refused", async () => {
    const { mkdirSync, writeFileSync } = await import("node:fs");
    const folder = join(dir.path, "lonely");
    mkdirSync(folder);
    writeFileSync(join(folder, "0001_a.pg.sql"), "SELECT 1");
    expect(() => loadMigrationDir("lonely", folder)).toThrow("has no SQLite twin");
  });
});
