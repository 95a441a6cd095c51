/**
 * `atrium user ...` and `atrium backup`: accounts managed from the command line on a data dir a server
 * uses, deleting a user with all of their data in every family, and a consistent backup.
 */

import { Database } from "bun:sqlite";
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { backup, backupAll } from "../../server/backup-command.ts";
import { openDb } from "../../server/storage/db/open.ts";
import { userCommandMain as userMain } from "../../server/user-command.ts";
import { ownerFolders } from "../../server/workspace/owner-folders.ts";
import { postJson, REPO_ROOT, type TestApp, testDatabaseEnv } from "../helpers/app.ts";
import { tempDir } from "../helpers/tmp.ts";
import { authApp, OWN_ORIGIN, PASSWORD, type SignedUser, signUp } from "./auth-app.ts";

setDefaultTimeout(60_000);

let t: TestApp | undefined;
const dirs: { remove(): void }[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const dir of dirs.splice(0)) dir.remove();
});

function dataDir(): string {
  const dir = tempDir();
  dirs.push(dir);
  return dir.path;
}

/**
 * The database settings of a data dir: none on SQLite; with ATRIUM_TEST_DATABASE=postgres one fresh
 * PostgreSQL database per data dir, which the app and the commands on that data dir share (as a server
 * and `atrium user` beside it share APP_DATABASE_URL).
 */
const databaseEnvs = new Map<string, Record<string, string>>();
async function databaseEnv(dir: string): Promise<Record<string, string>> {
  let env = databaseEnvs.get(dir);
  if (!env) {
    env = (await testDatabaseEnv()) as Record<string, string>;
    databaseEnvs.set(dir, env);
  }
  return env;
}

const appOn = async (dir: string, env: Record<string, string> = {}) =>
  authApp({ dataDir: dir, env: { ...(await databaseEnv(dir)), ...env } });

async function user(dir: string, args: string[], stdin = "") {
  let out = "";
  let err = "";
  const env = { ...process.env, ...(await databaseEnv(dir)) };
  const code = await userMain(
    [...args, "--data-dir", dir],
    {
      out: (text) => {
        out += text;
      },
      err: (text) => {
        err += text;
      },
      readStdin: async () => stdin,
    },
    env,
  );
  return { code, out, err };
}

const signIn = (app: TestApp, email: string, password: string) =>
  app.request("/api/auth/sign-in/email", postJson({ email, password }));

describe("atrium user", () => {
  test("add (first is an admin), list, admin, invite, reset-password, disable and enable", async () => {
    const dir = dataDir();
    const root = await user(dir, ["add", "root@example.org", "--password-stdin"], `${PASSWORD}\n`);
    expect(root).toMatchObject({ code: 0 });
    expect(root.out).toContain("as an admin");
    const ann = await user(dir, ["add", "ann@example.org", "--name", "Ann"]);
    expect(ann.out).not.toContain("admin");
    const generated = ann.out.match(/password: (\S+)/)?.[1] as string;
    expect(generated.length).toBeGreaterThanOrEqual(32);
    expect((await user(dir, ["add", "ann@example.org"])).code).toBe(1);

    const list = await user(dir, ["list"]);
    expect(list.out).toMatch(/root@example\.org\tu_\w+\tadmin\tactive/);
    expect(list.out).toMatch(/ann@example\.org\tu_\w+\tmember\tactive/);
    await user(dir, ["admin", "ann@example.org"]);
    expect((await user(dir, ["list"])).out).toMatch(/ann@example\.org\tu_\w+\tadmin/);

    const invite = await user(dir, ["invite"]);
    const code = invite.out.match(/invite: (\S+)/)?.[1] as string;

    t = await appOn(dir, { APP_AUTH_SIGNUP: "invite" });
    expect((await signIn(t, "root@example.org", PASSWORD)).status).toBe(200);
    const annIn = await signIn(t, "ann@example.org", generated);
    expect(annIn.status).toBe(200);
    const annToken = (await annIn.json()).token as string;
    const bob = await t.request(
      "/api/auth/sign-up/email",
      postJson({ email: "bob@example.org", password: PASSWORD, inviteCode: code }),
    );
    expect(bob.status).toBe(200);

    // A reset ends every session and the old password stops working.
    const reset = await user(
      dir,
      ["reset-password", "ann@example.org", "--password-stdin"],
      "a new long password\n",
    );
    expect(reset.code).toBe(0);
    expect(
      (await t.request("/api/chat/sessions", { headers: { authorization: `Bearer ${annToken}` } })).status,
    ).toBe(401);
    expect((await signIn(t, "ann@example.org", generated)).status).toBe(401);
    expect((await signIn(t, "ann@example.org", "a new long password")).status).toBe(200);

    await user(dir, ["disable", "bob@example.org"]);
    expect((await signIn(t, "bob@example.org", PASSWORD)).status).toBe(401);
    await user(dir, ["enable", "bob@example.org"]);
    expect((await signIn(t, "bob@example.org", PASSWORD)).status).toBe(200);
  });

  test("bad use is one clear line and a non-zero exit", async () => {
    const dir = dataDir();
    expect((await user(dir, ["frobnicate"])).err).toContain("unknown action 'frobnicate'");
    expect((await user(dir, ["disable", "nobody@example.org"])).err).toContain("no account with the email");
    expect((await user(dir, ["add", "x@y.z", "--password-stdin"], "short")).err).toContain("Passwords have");
    expect((await user(dir, ["invite", "--days", "0"])).code).toBe(1);
    expect((await user(dir, ["--bogus"])).code).toBe(2);
  });

  test("the compiled command line dispatches `user` (a subprocess of server/main.ts)", async () => {
    const dir = dataDir();
    const proc = Bun.spawn(["./node_modules/.bin/bun", "server/main.ts", "user", "list", "--data-dir", dir], {
      cwd: REPO_ROOT,
      stdout: "pipe",
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "", HOME: dir },
    });
    expect(await proc.exited).toBe(0);
    expect(await new Response(proc.stdout).text()).toBe("no accounts\n");
  });
});

/** Gives `who` something in every family: chat session, turn session and file, index, agent, memory. */
async function fill(app: TestApp, who: SignedUser) {
  const h = who.bearer;
  const ok = async (path: string, init: RequestInit) => {
    const r = await app.request(path, init);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  await ok("/api/chat/new", { method: "POST", headers: h });
  await ok("/api/sessions", postJson({ title: "mine" }, h));
  await ok("/api/files/content", { ...postJson({ path: "notes.txt", content: "secret" }, h), method: "PUT" });
  await ok(
    "/search/index",
    postJson({ name: "docs", documents: [{ name: "a", text: "Alice met Bob in Paris." }] }, h),
  );
  const agent = await ok("/v1/agents", postJson({ name: "Helper", role: "helps" }, h));
  await ok(
    "/v1/memory",
    postJson({ owner_id: agent.id, owner_type: "agent", type: "CONTEXT", content: "remember" }, h),
  );
}

/** The owner's rows per table, in app.db and (when the app uses it) PostgreSQL, read independently of the server's code. */
async function ownedRows(db: Database, app: TestApp, owner: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  if (app.ctx.database.engine === "postgres") {
    const tables = await app.ctx.database.all<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'owner_id'",
    );
    for (const { name } of tables) {
      const row = await app.ctx.database.get<{ n: number }>(
        `SELECT count(*) AS n FROM "${name}" WHERE owner_id = ?`,
        [owner],
      );
      if ((row?.n ?? 0) > 0) counts[name] = (counts[name] ?? 0) + (row?.n ?? 0);
    }
  }
  const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all();
  for (const { name } of tables) {
    const columns = db.query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${name}')`).all();
    if (!columns.some((c) => c.name === "owner_id")) continue;
    const n =
      db.query<{ n: number }, [string]>(`SELECT count(*) AS n FROM "${name}" WHERE owner_id = ?`).get(owner)
        ?.n ?? 0;
    if (n > 0) counts[name] = (counts[name] ?? 0) + n;
  }
  return counts;
}

test("user delete erases the user's rows in every family and their folders; others keep theirs", async () => {
  const dir = dataDir();
  t = await appOn(dir);
  const ann = await signUp(t, "ann@example.org");
  const bob = await signUp(t, "bob@example.org");
  await fill(t, ann);
  await fill(t, bob);
  const db = new Database(join(dir, "app.db"));
  const before = await ownedRows(db, t, ann.id);
  for (const table of ["chat_sessions", "turn_sessions", "search_indexes", "agents", "memory_entries"])
    expect({ table, has: (before[table] ?? 0) > 0 }).toEqual({ table, has: true });
  const bobBefore = await ownedRows(db, t, bob.id);
  expect(existsSync(join(ownerFolders(dir, ann.id).files, "notes.txt"))).toBe(true);

  expect((await user(dir, ["delete", "ann@example.org"])).code).toBe(1); // needs --yes
  const deleted = await user(dir, ["delete", "ann@example.org", "--yes"]);
  expect(deleted.code).toBe(0);
  expect(await ownedRows(db, t, ann.id)).toEqual({});
  expect(await t.ctx.database.get("SELECT count(*) AS n FROM users WHERE id = ?", [ann.id])).toEqual({
    n: 0,
  });
  expect(
    await t.ctx.database.get("SELECT count(*) AS n FROM auth_sessions WHERE user_id = ?", [ann.id]),
  ).toEqual({
    n: 0,
  });
  // Memory's text index: FTS5's memory_fts in app.db; on PostgreSQL it is memory_entries' own tsv column.
  if (t.ctx.database.engine === "sqlite")
    expect(db.query("SELECT count(*) AS n FROM memory_fts WHERE owner_id = ?").get(ann.id)).toEqual({ n: 0 });
  else
    expect(
      await t.ctx.database.get("SELECT count(*) AS n FROM memory_tags WHERE owner_id = ?", [ann.id]),
    ).toEqual({
      n: 0,
    });
  for (const folder of Object.values(ownerFolders(dir, ann.id))) expect(existsSync(folder)).toBe(false);
  expect(await ownedRows(db, t, bob.id)).toEqual(bobBefore);
  db.close();
  expect((await t.request("/api/chat/sessions", { headers: ann.bearer })).status).toBe(401);
  expect((await t.request("/v1/agents", { headers: bob.bearer })).status).toBe(200);
  expect(readFileSync(join(ownerFolders(dir, bob.id).files, "notes.txt"), "utf8")).toBe("secret");
  await t.request("/api/auth/sign-out", { method: "POST", headers: { ...bob.cookie, ...OWN_ORIGIN } });
});

test("backup copies a running server's database consistently and its files; the copy serves as a data dir", async () => {
  const dir = dataDir();
  t = await appOn(dir);
  const ann = await signUp(t, "ann@example.org");
  await fill(t, ann);
  const target = join(dataDir(), "copy");
  const url = t.ctx.env.get("APP_DATABASE_URL");
  expect((await backupAll(dir, target, { url, usePgDump: false })).copied).toBeGreaterThan(0);
  // On PostgreSQL the data dir holds files only (no app.db).
  const files = { appDb: !url };
  expect(() => backup(dir, target, undefined, files)).toThrow("not empty");
  expect(() => backup(dir, join(dir, "inside"), undefined, files)).toThrow("outside the data dir");
  await t.close();
  if (url) {
    // On PostgreSQL its tables there are in postgres.sql (the export; pg_dump: postgres-backup.test.ts),
    // loaded into the copy's own database.
    const env = await databaseEnv(target);
    const db = openDb({ url: env.APP_DATABASE_URL, dataDir: target });
    const text = readFileSync(join(target, "postgres.sql"), "utf8");
    await db.tx((tx) => tx.exec(text)).finally(() => db.close());
  }
  t = await appOn(target);
  expect((await signIn(t, "ann@example.org", PASSWORD)).status).toBe(200);
  const agents = await t.json<{ agents?: unknown[]; total?: number }>("/v1/agents", { headers: ann.bearer });
  expect(agents.status).toBe(200);
  expect(JSON.stringify(agents.body)).toContain("Helper");
  const file = await t.json<{ content: string }>("/api/files/content?path=notes.txt", {
    headers: ann.bearer,
  });
  expect(file.body.content).toBe("secret");
});
