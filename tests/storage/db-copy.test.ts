// biome-ignore-all lint/suspicious/noExplicitAny: response bodies are read loosely; the assertions check them.
/**
 * `atrium db copy`: a data dir populated through the API (accounts and a token, chat sessions with a
 * run, turns with their events, a search index, agents and memory) copied from app.db into PostgreSQL,
 * then served from there: the same sessions, turns, indexes, agents and accounts. Also: a non-empty
 * target refused with nothing written, a copy stopped half-way carried on, a tampered row caught by the
 * checksums, bad input as one line. Always on PostgreSQL (the throwaway cluster of helpers/postgres.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { migrationSets } from "../../server/app.ts";
import { backupAll } from "../../server/backup-command.ts";
import { dbCommandMain } from "../../server/db-command.ts";
import { applyMigrations, fromSqliteSet } from "../../server/storage/db/migrate.ts";
import { openDb } from "../../server/storage/db/open.ts";
import type { Db } from "../../server/storage/db/port.ts";
import { PASSWORD, SECRET, signUp } from "../auth/auth-app.ts";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { chat, scripted } from "../helpers/chat.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/tmp.ts";
import { turnsApp } from "../helpers/turns.ts";
import { fixtureDocuments } from "../search/fixtures.ts";

const AUTH = { APP_CHAT_RUNTIME_REQUIRE_AUTH: "1", APP_AUTH_SECRET: SECRET, APP_AUTH_SIGNUP: "open" };
const data = tempDir();
const dataDir = data.path;
const py = (code: string) => `\`\`\`python\n${code}\n\`\`\``;

/** What the source served, read through the API before the copy. */
let seen: Awaited<ReturnType<typeof views>>;
let bearer: Record<string, string>;
let token: string;

async function app(url: string): Promise<TestApp> {
  return turnsApp({ dataDir, env: { ...AUTH, APP_DATABASE_URL: url } });
}

/** The views the test compares between the source and the copy, as one user sees them. */
async function views(t: TestApp, headers: Record<string, string>) {
  const get = async (path: string) => (await t.json<any>(path, { headers })).body;
  const sessions = await get("/api/sessions");
  const turnSession = sessions.items[0].id;
  const agents = await get("/v1/agents");
  const agentId = agents.agents[0].id;
  const chatSessions = await get("/api/chat/sessions");
  return {
    turnSessions: sessions,
    turns: await get(`/api/sessions/${turnSession}/turns`),
    chatSessions,
    chatSession: withoutModel(await get(`/api/chat/session?sessionId=${chatSessions.sessions[0].id}`)),
    indexes: await get("/search/indexes"),
    agents,
    memory: await get(`/v1/memory/search?content_query=tabs&owner_id=${agentId}`),
    tokens: await get("/api/auth/tokens"),
  };
}

/** The chat session's current model: the scripted one is registered in the source's process only. */
function withoutModel(hydrated: any) {
  expect(hydrated.session.model).toBeString();
  const { model: _, ...session } = hydrated.session;
  return { ...hydrated, session };
}

type Io = { out: string; err: string };
async function copy(...args: string[]): Promise<{ code: number } & Io> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await dbCommandMain(["copy", ...args], {
    out: (t) => void out.push(t),
    err: (t) => void err.push(t),
  });
  return { code, out: out.join(""), err: err.join("") };
}

async function withDb<T>(url: string, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = openDb({ url, dataDir });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

beforeAll(async () => {
  // The source: app.db (whatever ATRIUM_TEST_DATABASE says), populated through the API.
  const t = await app("");
  try {
    const ann = await signUp(t, "ann@example.org", { name: "Ann O'Brien" });
    bearer = ann.bearer;
    const made = await t.json<{ token: string }>(
      "/api/auth/tokens",
      postJson({ name: "script", scopes: ["chat"] }, bearer),
    );
    token = made.body.token;
    const session = await createSessionAs(t, bearer);
    const turn = await t.request(`/api/sessions/${session}/turns`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
      body: JSON.stringify({ text: py("for i in range(3):\n    print('line', i)") }),
    });
    expect(turn.status).toBe(200);
    await turn.text();
    const model = scripted(t, [fauxAssistantMessage("Hello from the model.")]);
    const reply = await chat(t, { message: "Plan my week", model: model.id }, bearer);
    expect(reply.status).toBe(200);
    await reply.text();
    const documents = fixtureDocuments().map((d) => ({ name: d.title, text: d.text }));
    expect((await t.request("/search/index", postJson({ documents }, bearer))).status).toBe(200);
    const agent = await t.json<any>("/v1/agents", postJson({ name: "Mem", role: "keeper" }, bearer));
    expect(agent.status).toBe(200);
    const memory = await t.json<any>(
      "/v1/memory",
      postJson(
        {
          owner_id: agent.body.id,
          owner_type: "agent",
          type: "PREFERENCES",
          content: "prefers tabs",
          tags: ["style"],
        },
        bearer,
      ),
    );
    expect(memory.status).toBe(200);
    seen = await views(t, bearer);
  } finally {
    await t.close();
  }
}, 120_000);
afterAll(() => data.remove());

async function createSessionAs(t: TestApp, headers: Record<string, string>): Promise<string> {
  const { body } = await t.json<{ id: string }>("/api/sessions", postJson({ title: "moved" }, headers));
  return body.id;
}

describe("atrium db copy from app.db to PostgreSQL", () => {
  test("the copied server shows the same sessions, turns, indexes, agents and accounts", async () => {
    const url = await freshPostgresDatabase();
    const done = await copy("--from", dataDir, "--to", url);
    expect(done.err).toContain("turn_events");
    expect(done).toMatchObject({ code: 0 });
    expect(done.out).toMatch(/^copied \d+ tables, \d+ rows, counts and checksums verified\n$/);
    expect(done.err).not.toContain(url);

    const t = await app(url);
    try {
      expect(t.ctx.database.engine).toBe("postgres");
      const signedIn = await t.request(
        "/api/auth/sign-in/email",
        postJson({ email: "ann@example.org", password: PASSWORD }),
      );
      expect(signedIn.status).toBe(200);
      expect(await views(t, bearer)).toEqual(seen);
      const bySecret = await t.request("/api/chat/sessions", {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(bySecret.status).toBe(200);
      // Local search answers from the copied index (its text rows rebuilt as tsvectors).
      const local = await t.json<any>("/search/local", postJson({ query: "Who is Scrooge?" }, bearer));
      expect(local.status).toBe(200);
      expect(local.body.context_data.entities.length).toBeGreaterThan(0);
      // New rows get ids after the copied ones (the identity sequences moved on).
      const again = await createSessionAs(t, bearer);
      expect(again).toBeString();
      const agent = await t.json<any>("/v1/agents", postJson({ name: "New", role: "after" }, bearer));
      expect(agent.status).toBe(200);
      // A second index: its index, entity and unit rows take identity ids after the copied ones.
      const documents = fixtureDocuments().map((d) => ({ name: d.title, text: d.text }));
      const second = await t.request("/search/index", postJson({ name: "second", documents }, bearer));
      expect(second.status).toBe(200);
    } finally {
      await t.close();
    }
  }, 120_000);
});

/** One line on stderr, no stack trace. */
function oneLine(err: string): string {
  const lines = err.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(err).not.toMatch(/\n\s+at /);
  return lines[0] as string;
}

const count = (db: Db, table: string) =>
  db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`).then((r) => r?.n ?? 0);

describe("resuming and checking", () => {
  test("a copy stopped half-way carries on: the tables verified before are checked, not copied again", async () => {
    const url = await freshPostgresDatabase();
    // The target's schema, then a trigger that stops the copy at turn_events (an error mid-copy).
    await withDb(url, async (db) => {
      await applyMigrations(db, migrationSets().map(fromSqliteSet));
      await db.exec(`CREATE FUNCTION stop_copy() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'stopped by the test'; END $$ LANGUAGE plpgsql;
        CREATE TRIGGER stop_copy BEFORE INSERT ON turn_events FOR EACH STATEMENT EXECUTE FUNCTION stop_copy();`);
    });
    const stopped = await copy("--from", dataDir, "--to", url);
    expect(stopped.code).toBe(1);
    expect(stopped.err).toContain("turn_runs: 1 rows copied, verified");
    expect(stopped.err).toContain("stopped by the test");
    expect(stopped.err).not.toContain("turn_spans");
    const before = await withDb(url, async (db) => {
      expect(await count(db, "turn_events")).toBe(0);
      expect(await count(db, "turn_sessions")).toBe(1);
      await db.exec("DROP TRIGGER stop_copy ON turn_events");
      return count(db, "db_copy_progress");
    });
    expect(before).toBeGreaterThan(30);

    const resumed = await copy("--from", dataDir, "--to", url);
    expect(resumed.code).toBe(0);
    expect(resumed.err).toMatch(/turn_sessions: 1 rows, verified \(copied by an earlier run\)/);
    expect(resumed.err).toMatch(/turn_events: [1-9]\d* rows copied, verified/);
    expect(resumed.out).toContain(`(${before} copied by an earlier run)`);
    const t = await app(url);
    try {
      expect(await views(t, bearer)).toEqual(seen);
    } finally {
      await t.close();
    }
  }, 120_000);

  test("a tampered row is caught by the checksums, on a later run and while copying", async () => {
    const url = await freshPostgresDatabase();
    expect((await copy("--from", dataDir, "--to", url)).code).toBe(0);
    await withDb(url, (db) => db.run("UPDATE turn_sessions SET title = 'tampered'"));
    const changed = await copy("--from", dataDir, "--to", url);
    expect(changed.code).toBe(1);
    expect(changed.out).toBe("");
    expect(changed.err).toContain("turn_sessions: DIFFERS");
    expect(changed.err).toMatch(
      /1 table\(s\) differ from the source: turn_sessions: 1 rows in both, checksums differ/,
    );
    await withDb(url, (db) => db.run("DELETE FROM memory_tags"));
    const fewer = await copy("--from", dataDir, "--to", url);
    expect(fewer.err).toContain("memory_tags: 1 rows in the source, 0 in the target");

    // While copying: a trigger on the target changes what lands; the read-back checksum refuses it.
    const other = await freshPostgresDatabase();
    await withDb(other, async (db) => {
      await applyMigrations(db, migrationSets().map(fromSqliteSet));
      await db.exec(`CREATE FUNCTION shout() RETURNS trigger AS $$ BEGIN NEW.name := upper(NEW.name); RETURN NEW; END $$ LANGUAGE plpgsql;
        CREATE TRIGGER shout BEFORE INSERT ON agents FOR EACH ROW EXECUTE FUNCTION shout();`);
    });
    const altered = await copy("--from", dataDir, "--to", other);
    expect(altered.code).toBe(1);
    expect(altered.err).toContain(
      "the copy does not match its source: agents: 1 rows in both, checksums differ",
    );
    await withDb(other, async (db) => {
      expect(await count(db, "agents")).toBe(0);
      expect(await db.get("SELECT 1 FROM db_copy_progress WHERE table_name = 'agents'")).toBeUndefined();
    });
  }, 120_000);
});

describe("refusals", () => {
  test("a target with rows of its own is refused with nothing written; --force replaces them", async () => {
    const url = await freshPostgresDatabase();
    const other = await createTestApp({ env: { ...AUTH, APP_DATABASE_URL: url } });
    try {
      await signUp(other, "bob@example.org");
    } finally {
      await other.close();
    }
    // Another application's table in the same schema: never emptied, never copied.
    await withDb(url, (db) =>
      db.exec(
        "CREATE TABLE other_app_notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO other_app_notes VALUES (1, 'kept')",
      ),
    );
    const snapshot = (db: Db) =>
      db.all(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1",
      );
    const tablesBefore = await withDb(url, snapshot);
    const refused = await copy("--from", dataDir, "--to", url);
    expect(refused.code).toBe(1);
    expect(oneLine(refused.err)).toMatch(
      /the target database is not empty \(.*users: 1 rows.*\); nothing was written/,
    );
    await withDb(url, async (db) => {
      expect(await snapshot(db)).toEqual(tablesBefore);
      expect(await count(db, "auth_accounts")).toBe(1);
    });

    const forced = await copy("--from", dataDir, "--to", url, "--force");
    expect(forced.code).toBe(0);
    expect(forced.err).not.toContain("other_app_notes");
    await withDb(url, async (db) =>
      expect(await db.all("SELECT id, body FROM other_app_notes")).toEqual([{ id: 1, body: "kept" }]),
    );
    const t = await app(url);
    try {
      expect(await views(t, bearer)).toEqual(seen);
      const bob = await t.request(
        "/api/auth/sign-in/email",
        postJson({ email: "bob@example.org", password: PASSWORD }),
      );
      expect(bob.status).toBe(401);
    } finally {
      await t.close();
    }
  }, 120_000);

  test("bad input is one line and exit 2 or 1, never a stack trace", async () => {
    const url = await freshPostgresDatabase();
    expect(await copy("--to", url)).toMatchObject({ code: 2 });
    expect((await copy("--from", dataDir)).code).toBe(2);
    const usage = await copy("--from", dataDir, "--to", join(dataDir, "app.db"));
    expect(usage.code).toBe(2);
    expect(usage.err).toContain("--to must be a postgres:// URL");
    expect(await dbCommandMain(["move"], { out() {}, err() {} })).toBe(2);

    // Nothing listens on port 1 of loopback: refused at once. The password is never repeated.
    const unreachable = await copy("--from", dataDir, "--to", "postgres://atrium:hunter2@127.0.0.1:1/atrium");
    expect(unreachable.code).toBe(1);
    expect(oneLine(unreachable.err)).toContain("cannot reach the target database");
    expect(unreachable.err).not.toContain("hunter2");

    const scratch = tempDir();
    try {
      const text = join(scratch.path, "notes.txt");
      writeFileSync(text, "not a database at all, just some words to fill a page ".repeat(100));
      const notDb = await copy("--from", text, "--to", url);
      expect(notDb.code).toBe(1);
      expect(oneLine(notDb.err)).toContain("is not an Atrium database");
      const plain = join(scratch.path, "plain.db");
      const { Database } = await import("bun:sqlite");
      const db = new Database(plain);
      db.exec("CREATE TABLE t (x)");
      db.close();
      const foreign = await copy("--from", plain, "--to", url);
      expect(foreign.code).toBe(1);
      expect(oneLine(foreign.err)).toContain("is not an Atrium database (it has no schema_migrations table)");
      const missing = await copy("--from", join(scratch.path, "nothing.db"), "--to", url);
      expect(missing.code).toBe(1);
      expect(oneLine(missing.err)).toContain("no such database file");
    } finally {
      scratch.remove();
    }
    // None of these wrote to the target.
    await withDb(url, async (db) =>
      expect(
        await db.get<{ n: number }>(
          "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = current_schema()",
        ),
      ).toEqual({ n: 0 }),
    );
  }, 60_000);
});

describe("PostgreSQL to PostgreSQL", () => {
  test("a copied PostgreSQL database copies on to another, the same rows and checksums, and backs up", async () => {
    const first = await freshPostgresDatabase();
    const second = await freshPostgresDatabase();
    const a = await copy("--from", dataDir, "--to", first);
    expect(a.code).toBe(0);
    const b = await copy("--from", first, "--to", second);
    expect(b.code).toBe(0);
    expect(b.out).toBe(a.out);
    const checksums = (url: string) =>
      withDb(url, (db) =>
        db.all("SELECT table_name, rows, checksum FROM db_copy_progress ORDER BY table_name"),
      );
    // Computed on SQLite for the first copy and on PostgreSQL for the second: the same per table.
    expect(await checksums(second)).toEqual(await checksums(first));
    // `atrium backup`'s export of the copied database restores (the copy's own record left out).
    const backupDir = tempDir();
    try {
      const target = join(backupDir.path, "copy");
      const done = await backupAll(dataDir, target, { url: second, usePgDump: false });
      expect(done.postgres?.method).toBe("export");
      const third = await freshPostgresDatabase();
      await withDb(third, async (db) => {
        const text = readFileSync(join(target, "postgres.sql"), "utf8");
        await db.tx((tx) => tx.exec(text));
      });
      const t = await app(third);
      try {
        expect(await views(t, bearer)).toEqual(seen);
      } finally {
        await t.close();
      }
    } finally {
      backupDir.remove();
    }
  }, 120_000);
});
