/**
 * `atrium backup` on PostgreSQL: the tables there go into postgres.sql, by pg_dump when it is on PATH and
 * else by the one-snapshot export, beside the data dir's files (no app.db: the server has none); either
 * file, loaded into an empty database, gives a server that signs the same accounts in and accepts the
 * same access tokens. Always on PostgreSQL (the throwaway
 * cluster of tests/helpers/postgres.ts), whatever ATRIUM_TEST_DATABASE says.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { backupAll } from "../../server/backup-command.ts";
import { openDb } from "../../server/storage/db/open.ts";
import { libpqEnv, sqlLiteral } from "../../server/storage/postgres-backup.ts";
import { authApp, PASSWORD, signUp } from "../auth/auth-app.ts";
import { postJson, type TestApp } from "../helpers/app.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/tmp.ts";

const dirs: { path: string; remove(): void }[] = [];
const apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});
afterAll(() => {
  for (const dir of dirs) dir.remove();
});
const dir = () => {
  const d = tempDir();
  dirs.push(d);
  return d.path;
};

async function app(dataDir: string, url: string): Promise<TestApp> {
  const made = await authApp({ dataDir, env: { APP_DATABASE_URL: url } });
  apps.push(made);
  return made;
}

/** A server on PostgreSQL with an account (a name with a quote), a session and an access token. */
async function populated() {
  const url = await freshPostgresDatabase();
  const dataDir = dir();
  const t = await app(dataDir, url);
  const ann = await signUp(t, "ann@example.org", { name: "O'Brien \\ 'quoted'" });
  // A refused attempt leaves rows in auth_limit_hits, whose ids are an identity column.
  const wrong = postJson({ email: "ann@example.org", password: "wrong-password" });
  expect((await t.request("/api/auth/sign-in/email", wrong)).status).toBe(401);
  const created = await t.json<{ token: string }>(
    "/api/auth/tokens",
    postJson({ name: "script", scopes: ["chat"] }, ann.bearer),
  );
  expect(created.status).toBe(200);
  return { t, url, dataDir, ann, token: created.body.token };
}

/** Loads a backup file into a fresh database: the export through the port, a pg_dump file through psql. */
async function restore(file: string, method: "pg_dump" | "export"): Promise<string> {
  const url = await freshPostgresDatabase();
  if (method === "export") {
    const db = openDb({ url, dataDir: dir() });
    try {
      const text = readFileSync(file, "utf8");
      await db.tx((tx) => tx.exec(text));
    } finally {
      await db.close();
    }
    return url;
  }
  const psql = Bun.which("psql") as string;
  const proc = Bun.spawn([psql, "-v", "ON_ERROR_STOP=1", "-q", "-f", file], {
    env: { ...process.env, ...libpqEnv(url) },
    stdout: "ignore",
    stderr: "pipe",
  });
  expect({ code: await proc.exited, err: await new Response(proc.stderr).text() }).toEqual({
    code: 0,
    err: "",
  });
  return url;
}

describe("atrium backup on PostgreSQL", () => {
  for (const method of ["export", "pg_dump"] as const) {
    test(`${method}: the restored database serves the same accounts, sessions and tokens`, async () => {
      if (method === "pg_dump") expect(Bun.which("pg_dump")).not.toBeNull();
      const { t, url, dataDir, ann, token } = await populated();
      const target = join(dir(), "copy");
      const done = await backupAll(dataDir, target, { url, usePgDump: method === "pg_dump" });
      expect(done.postgres).toMatchObject({ method, file: join(target, "postgres.sql") });
      expect(done.postgres?.rows).toBeGreaterThan(0);
      // The data dir holds files only: the database is postgres.sql, and there is no app.db to copy.
      expect(existsSync(join(dataDir, "app.db"))).toBe(false);
      expect(readdirSync(target).filter((name) => name.startsWith("app.db"))).toEqual([]);
      const text = readFileSync(join(target, "postgres.sql"), "utf8");
      // The password hash is there, the password and the token's secret are not.
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(token.split("_")[2] as string);
      // Written after the backup: not in the copy.
      await signUp(t, "late@example.org");

      const restored = await app(target, await restore(join(target, "postgres.sql"), method));
      const signedIn = await restored.request(
        "/api/auth/sign-in/email",
        postJson({ email: "ann@example.org", password: PASSWORD }),
      );
      expect(signedIn.status).toBe(200);
      expect(((await signedIn.json()) as { user: { name: string } }).user.name).toBe("O'Brien \\ 'quoted'");
      // The session secret (bytea) and the token's hash came across byte for byte.
      expect((await restored.request("/api/auth/tokens", { headers: ann.bearer })).status).toBe(200);
      expect(
        (await restored.request("/api/chat/sessions", { headers: { authorization: `Bearer ${token}` } }))
          .status,
      ).toBe(200);
      const late = await restored.request(
        "/api/auth/sign-in/email",
        postJson({ email: "late@example.org", password: PASSWORD }),
      );
      expect(late.status).toBe(401);
      // New rows get ids after the copied ones (the identity sequences moved on), or the next counted
      // attempt would collide with a copied id.
      const before = await restored.ctx.database.get<{ n: number }>(
        "SELECT count(*) AS n FROM auth_limit_hits",
      );
      expect(before?.n).toBeGreaterThan(0);
      const wrong = postJson({ email: "ann@example.org", password: "wrong-password" });
      expect((await restored.request("/api/auth/sign-in/email", wrong)).status).toBe(401);
      const after = await restored.ctx.database.get<{ n: number }>(
        "SELECT count(*) AS n FROM auth_limit_hits",
      );
      expect(after?.n).toBe((before?.n ?? 0) + 2);
    });
  }

  test("literals: quotes doubled, bytes as bytea hex, numbers as they are", () => {
    expect(sqlLiteral("it's")).toBe("'it''s'");
    expect(sqlLiteral(new Uint8Array([0, 255]))).toBe("'\\x00ff'::bytea");
    expect(sqlLiteral(null)).toBe("NULL");
    expect(sqlLiteral(12)).toBe("12");
    expect(() => sqlLiteral(Number.NaN)).toThrow();
  });

  test("a URL of another kind stops the backup before anything is written, without repeating it", async () => {
    const source = dir();
    const t = await app(source, await freshPostgresDatabase());
    expect(t.ctx.database.engine).toBe("postgres");
    const target = join(dir(), "copy");
    const refused = await backupAll(source, target, { url: "mysql://root:hunter2@127.0.0.1/x" }).catch(
      (e: Error) => e,
    );
    expect(String(refused)).toContain("postgres://");
    expect(String(refused)).not.toContain("hunter2");
    expect(Bun.file(join(target, "app.db")).size).toBe(0);
  });
});
