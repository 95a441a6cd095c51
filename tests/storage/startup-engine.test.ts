/**
 * Startup picks the engine from APP_DATABASE_URL. With a URL the server's one database is PostgreSQL:
 * no app.db is created in the data dir (not by startup, a chat, a turn, an agent, a user deleted with
 * `atrium user`), and an app.db left there from before the move is not touched, only named once in the
 * log as unused. Without a URL the port is app.db's own connection, as before.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { backupAll } from "../../server/backup-command.ts";
import { migrateCommandMain } from "../../server/migrate-command.ts";
import { openDatabase } from "../../server/storage/database.ts";
import { DatabaseUrlError } from "../../server/storage/db/open.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { coreMigrations } from "../../server/storage/migrations/index.ts";
import { userCommandMain } from "../../server/user-command.ts";
import { SECRET, signUp } from "../auth/auth-app.ts";
import { createTestApp, memoryLogger, postJson } from "../helpers/app.ts";
import { chat, scripted } from "../helpers/chat.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/tmp.ts";
import { turnsApp } from "../helpers/turns.ts";

const AUTH = { APP_CHAT_RUNTIME_REQUIRE_AUTH: "1", APP_AUTH_SECRET: SECRET, APP_AUTH_SIGNUP: "open" };
const UNUSED = "app.db in the data dir is not used";

/** The app.db files of a data dir (the database, its WAL and shared memory). */
const appDbFiles = (dir: string) => readdirSync(dir).filter((name) => name.startsWith("app.db"));

/** An `atrium` command's exit code and output. */
async function command(
  main: typeof userCommandMain | typeof migrateCommandMain,
  args: string[],
  env: Record<string, string>,
) {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) };
  const code = await main(args, { ...io, readStdin: async () => "" }, env);
  return { code, out: out.join(""), err: err.join("") };
}

describe("the engine at startup", () => {
  test("with a URL no app.db is created: not by startup, a chat, a turn, an agent or a user deleted", async () => {
    const url = await freshPostgresDatabase();
    const logs = memoryLogger();
    const t = await turnsApp({ env: { ...AUTH, APP_DATABASE_URL: url }, log: logs.log });
    try {
      expect(t.ctx.database.engine).toBe("postgres");
      expect(t.ctx.db).toBeUndefined();
      expect(appDbFiles(t.dataDir)).toEqual([]);
      const ann = await signUp(t, "ann@example.org");
      const session = await t.json<{ id: string }>("/api/sessions", postJson({ title: "t" }, ann.bearer));
      const turn = await t.request(`/api/sessions/${session.body.id}/turns`, {
        method: "POST",
        headers: {
          ...ann.bearer,
          "content-type": "application/json",
          "idempotency-key": crypto.randomUUID(),
        },
        body: JSON.stringify({ text: "```python\nprint('on postgres')\n```" }),
      });
      expect(turn.status).toBe(200);
      expect(await turn.text()).toContain("on postgres");
      const model = scripted(t, [fauxAssistantMessage("Hello.")]);
      const reply = await chat(t, { message: "hi", model: model.id }, ann.bearer);
      expect(reply.status).toBe(200);
      await reply.text();
      const agent = await t.json<{ id: string }>(
        "/v1/agents",
        postJson({ name: "A", role: "r" }, ann.bearer),
      );
      expect(agent.status).toBe(200);
      const owned = async () =>
        (
          await t.ctx.database.get<{ n: number }>(
            `SELECT (SELECT count(*) FROM chat_sessions WHERE owner_id = ?) + (SELECT count(*) FROM turn_sessions WHERE owner_id = ?) + (SELECT count(*) FROM agents WHERE owner_id = ?) AS n`,
            [ann.id, ann.id, ann.id],
          )
        )?.n;
      expect(await owned()).toBe(3);

      const env = { APP_DATABASE_URL: url, APP_AUTH_SECRET: SECRET };
      const deleted = await command(
        userCommandMain,
        ["delete", "ann@example.org", "--yes", "--data-dir", t.dataDir],
        env,
      );
      expect(deleted).toMatchObject({ code: 0, err: "" });
      expect(deleted.out).toContain("deleted ann@example.org");
      expect(await owned()).toBe(0);
      expect(appDbFiles(t.dataDir)).toEqual([]);
      // Nothing to say about an app.db that is not there.
      expect(logs.text()).not.toContain(UNUSED);
    } finally {
      await t.close();
    }
  }, 60_000);

  test("an app.db from before the move stays byte for byte, unopened; the log says once that it is unused", async () => {
    const data = tempDir();
    try {
      // What a build before the move left: app.db with the core tables and an account's user row.
      const old = openDatabase(join(data.path, "app.db"));
      migrate(old, [coreMigrations]);
      old.run("INSERT INTO users (id, display_name) VALUES ('ann', 'Ann')");
      old.close();
      const files = () =>
        appDbFiles(data.path).map((name) => {
          const path = join(data.path, name);
          return { name, bytes: readFileSync(path).toString("base64"), mtime: statSync(path).mtimeMs };
        });
      const before = files();
      expect(before.map((f) => f.name)).toEqual(["app.db"]);

      const url = await freshPostgresDatabase();
      const logs = memoryLogger();
      const t = await createTestApp({ dataDir: data.path, env: { APP_DATABASE_URL: url }, log: logs.log });
      try {
        expect((await t.json("/api/sessions", postJson({ title: "after the move" }))).status).toBe(200);
        const env = { APP_DATABASE_URL: url };
        const check = await command(migrateCommandMain, ["--check", "--data-dir", data.path], env);
        expect(check).toMatchObject({ code: 0, out: "the PostgreSQL database: at the head\n" });
        expect((await command(userCommandMain, ["list", "--data-dir", data.path], env)).code).toBe(0);
        const backups = tempDir();
        try {
          const target = join(backups.path, "copy");
          const done = await backupAll(data.path, target, { url });
          expect(done.postgres?.file).toBe(join(target, "postgres.sql"));
          expect(existsSync(join(target, "app.db"))).toBe(false);
        } finally {
          backups.remove();
        }
      } finally {
        await t.close();
      }
      expect(files()).toEqual(before);
      const said = logs.lines().filter((line) => String(line.msg).startsWith(UNUSED));
      expect(said).toHaveLength(1);
      expect(said[0]?.level).toBe("warn");
      expect(said[0]?.msg).toContain("atrium db copy");
      expect(said[0]?.file).toBe(join(data.path, "app.db"));
      expect(logs.text()).not.toContain(url);
    } finally {
      data.remove();
    }
  });

  test("without a URL the port is app.db's own connection", async () => {
    const logs = memoryLogger();
    const t = await createTestApp({ env: { APP_DATABASE_URL: "" }, log: logs.log });
    try {
      expect(t.ctx.database.engine).toBe("sqlite");
      await t.ctx.database.run("CREATE TABLE fixture_shared (id INTEGER)");
      expect(t.ctx.db?.query("SELECT count(*) AS n FROM fixture_shared").get()).toEqual({ n: 0 });
      expect(appDbFiles(t.dataDir)).toContain("app.db");
      expect(logs.text()).not.toContain(UNUSED);
    } finally {
      await t.close();
    }
  });

  test("a URL of another kind stops startup without repeating it (it may hold a password)", async () => {
    const failed = createTestApp({ env: { APP_DATABASE_URL: "mysql://atrium:hunter2@127.0.0.1/atrium" } });
    const error = await failed.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DatabaseUrlError);
    expect(String((error as Error).message)).not.toContain("hunter2");
  });
});
