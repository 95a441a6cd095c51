/**
 * The migration policy switch and `atrium migrate`: a profile with `[database] migrations =
 * "require_head"` refuses to start on a database behind the head, naming the command, which applies them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { migrationSets } from "../../server/app.ts";
import { createEnvSource } from "../../server/config/env.ts";
import { loadPolicy } from "../../server/config/policy.ts";
import { migrateCommandMain as main } from "../../server/migrate-command.ts";
import { openDb } from "../../server/storage/db/open.ts";
import { createTestApp, REPO_ROOT } from "../helpers/app.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/tmp.ts";

const committed = readFileSync(join(REPO_ROOT, "config/policy.toml"), "utf8");
const dir = tempDir("atrium-migrate-cmd-");
afterAll(() => dir.remove());

function policyWith(name: string, text: string): string {
  const path = join(dir.path, name);
  writeFileSync(path, text);
  return path;
}

async function run(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => void out.push(t), err: (t) => void err.push(t) }, env);
  return { code, out: out.join(""), err: err.join("") };
}

describe("migration policy and atrium migrate", () => {
  test("require_head refuses to start behind the head; atrium migrate moves it; then it starts", async () => {
    expect(committed).toContain('migrations = "apply"');
    const policy = policyWith(
      "head.toml",
      committed.replace('migrations = "apply"', 'migrations = "require_head"'),
    );
    const t = await createTestApp({ policyPath: policy, compose: false });
    try {
      const refused = await t.compose().catch((e: Error) => e);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message).toContain("behind the migration head");
      expect((refused as Error).message).toContain("atrium migrate");
      expect((refused as Error).message).toContain("core/0001_users");
      // Nothing was applied by refusing.
      // The command sees the app's database (its PostgreSQL one when the suite runs there).
      const url = t.ctx.env.get("APP_DATABASE_URL");
      const env: Record<string, string> = url ? { APP_DATABASE_URL: url } : {};
      const before = await run(["--check", "--data-dir", t.dataDir, "--policy", policy], env);
      expect(before.code).toBe(1);
      expect(before.out).toContain("pending: core/0001_users");

      const migrated = await run(["--data-dir", t.dataDir, "--policy", policy], env);
      expect(migrated).toMatchObject({ code: 0, err: "" });
      expect(migrated.out).toContain("applied core/0001_users");
      expect(await run(["--check", "--data-dir", t.dataDir, "--policy", policy], env)).toMatchObject({
        code: 0,
      });
      expect((await run(["--data-dir", t.dataDir, "--policy", policy], env)).out).toContain(
        "already at the head",
      );

      await t.compose();
      expect((await t.request("/api/health")).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  test("the managed profiles require the head; the default applies at startup; other values are refused", () => {
    const env = createEnvSource({
      APP_DATABASE_URL: "postgres://x@127.0.0.1/x",
      APP_GATEWAY_TOKEN: "t",
      APP_GATEWAY_BASE_URL: "http://127.0.0.1:1",
      APP_TRACING_ENDPOINT: "http://127.0.0.1:1",
      APP_TRACING_TOKEN: "t",
    });
    const path = join(REPO_ROOT, "config/policy.toml");
    expect(loadPolicy(path, env).settings.database.migrations).toBe("apply");
    for (const profile of ["sandbox-managed", "sandbox-bench", "sandbox-bench-40"]) {
      const p = policyWith(
        `${profile}.toml`,
        committed.replace('default_profile = "sandbox"', `default_profile = "${profile}"`),
      );
      expect(loadPolicy(p, env).settings.database.migrations).toBe("require_head");
    }
    const bad = policyWith("bad.toml", committed.replace('migrations = "apply"', 'migrations = "sometimes"'));
    expect(() => loadPolicy(bad, env)).toThrow("database");
  });

  test("on PostgreSQL it migrates every scope there and nothing in the data dir, as startup does; a non-postgres URL is refused", async () => {
    const url = await freshPostgresDatabase();
    const dataDir = join(dir.path, "pg");
    mkdirSync(dataDir);
    const env = { APP_DATABASE_URL: url };
    const before = await run(["--check", "--data-dir", dataDir], env);
    expect(before.code).toBe(1);
    // One line, about PostgreSQL: every migration of every scope is pending there.
    const all = migrationSets().flatMap((set) => set.migrations.map((m) => m.name));
    expect(before.out).toStartWith(`the PostgreSQL database: ${all.length} pending: core/0001_users`);
    expect(before.out.trimEnd().split("\n")).toHaveLength(1);
    expect(before.out).not.toContain("app.db");
    const migrated = await run(["--data-dir", dataDir], env);
    expect(migrated).toMatchObject({ code: 0, err: "" });
    expect(migrated.out.trimEnd().split("\n")).toHaveLength(1);
    for (const set of migrationSets()) expect(migrated.out).toContain(`${set.scope}/0001_`);
    expect(migrated.out).not.toContain("app.db");
    expect(readdirSync(dataDir)).toEqual([]);
    const pg = openDb({ url, dataDir });
    try {
      const tables = await pg.all<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()",
      );
      expect(tables.map((t) => t.name)).toEqual(
        expect.arrayContaining(["users", "auth_accounts", "sandbox_uids"]),
      );
      expect(await pg.all("SELECT id FROM users")).toEqual([{ id: "local" }]);
    } finally {
      await pg.close();
    }
    const again = await run(["--check", "--data-dir", dataDir], env);
    expect(again).toMatchObject({ code: 0, out: "the PostgreSQL database: at the head\n" });
    expect(readdirSync(dataDir)).toEqual([]);
    expect((await run(["--data-dir", dataDir], env)).out).not.toContain("applied");
    const other = await run(["--data-dir", join(dir.path, "other")], {
      APP_DATABASE_URL: "mysql://root:hunter2@127.0.0.1/x",
    });
    expect(other.code).toBe(1);
    expect(other.err).toContain("must start with postgres://");
    expect(other.err).not.toContain("hunter2");
  });
});
