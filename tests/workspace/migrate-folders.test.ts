/**
 * A data dir written by earlier builds opens unchanged: its per-owner folders, named the old ways (turns'
 * encodeURIComponent, chat's cut `x<hex>`), are moved to today's names at startup, merged where an owner
 * had several, with pi's session headers and the chat mirror's file paths rewritten; everything is
 * reachable through the API afterwards and nothing is left at an old name.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { migrationSets } from "../../server/app.ts";
import type { CredentialResolver } from "../../server/auth/identity.ts";
import { sqlitePort } from "../../server/storage/db/sqlite.ts";
import { migrate } from "../../server/storage/migrate.ts";
import { moveMerging } from "../../server/workspace/merge.ts";
import {
  migrateOwnerFolders,
  moveOwnerFolders,
  OWNER_FOLDERS_STEP,
  planMoves,
} from "../../server/workspace/migrate-folders.ts";
import { ownerFolders } from "../../server/workspace/owner-folders.ts";
import { createTestApp, memoryLogger, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import type { ScriptedModel as Scripted } from "../helpers/faux.ts";
import { type Event, lines } from "../helpers/streams.ts";
import { tempDir } from "../helpers/tmp.ts";

const ALICE = "auth0|alice@example.com";
const BOB = `${"b".repeat(70)}|bob`; // long: the old chat name is cut to 120 hex digits
const CAROL = "carol.smith"; // no row anywhere: only a turns folder names her
const TWIN1 = `${"t".repeat(60)}|one`; // two owners whose old chat names were the same cut hex
const TWIN2 = `${"t".repeat(60)}|two`;
const owners: Record<string, string> = { alice: ALICE, bob: BOB, carol: CAROL, twin1: TWIN1 };
const resolver: CredentialResolver = (request) => {
  const id = owners[request.headers.get("authorization")?.replace(/^Bearer /, "") ?? ""];
  return id === undefined ? undefined : { id, kind: "bearer" };
};
const as = (who: string) => ({ headers: { authorization: `Bearer ${who}` } });

// The old names, written here the way the earlier builds wrote them (not with today's functions).
const turnsName = (owner: string) => encodeURIComponent(owner);
const chatHexName = (owner: string) => `x${Buffer.from(owner).toString("hex").slice(0, 120)}`;
const chatShaName = (owner: string) => `=${new Bun.CryptoHasher("sha256").update(owner).digest("hex")}`;

function put(path: string, content: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

const SESSION_ID = "01a20a73-773d-77a8-9f1e-a10e8e1047fd";
const SESSION_FILE = `2026-01-02T03-04-05-006Z_${SESSION_ID}.jsonl`;

/** A pi session file as the chat runtime wrote it: the header names the workspace by absolute path. */
function sessionJsonl(cwd: string, model: { provider: string; id: string }): string {
  const at = "2026-01-02T03:04:05.006Z";
  const entries = [
    { type: "session", version: 3, id: SESSION_ID, timestamp: at, cwd },
    {
      type: "model_change",
      id: "e1",
      parentId: null,
      timestamp: at,
      provider: model.provider,
      modelId: model.id,
    },
    {
      type: "message",
      id: "e2",
      parentId: "e1",
      timestamp: at,
      message: { role: "user", content: [{ type: "text", text: "hello from the old build" }], timestamp: 1 },
    },
    {
      type: "message",
      id: "e3",
      parentId: "e2",
      timestamp: at,
      message: {
        role: "assistant",
        content: [{ type: "text", text: "old answer" }],
        api: "faux",
        provider: model.provider,
        model: model.id,
        usage: {
          input: 1,
          output: 1,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 2,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "stop",
        timestamp: 2,
      },
    },
  ];
  return `${entries.map((e) => JSON.stringify(e)).join("\n")}\n`;
}

const sha = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");
const at = "2026-01-02T03:04:05.006Z";

/** The data dir of the earlier builds, with rows naming its owners. */
function writeOldLayout(data: string, db: Database, model: { provider: string; id: string }) {
  // Alice: turns' encoded folders, chat's cut-hex folders (before issue 12) and chat's =sha256 folder.
  put(join(data, "workspaces", turnsName(ALICE), "files", "report.txt"), "turns file");
  put(join(data, "workspaces", turnsName(ALICE), "files", "same.txt"), "from turns");
  put(join(data, "workspaces", chatHexName(ALICE), "chat-notes.md"), "chat notes");
  put(join(data, "workspaces", chatHexName(ALICE), "files", "same.txt"), "from chat");
  put(join(data, "workspaces", chatShaName(ALICE), "later.md"), "written after issue 12");
  const oldSessions = join(data, "sessions", chatHexName(ALICE));
  put(join(oldSessions, SESSION_FILE), sessionJsonl(join(data, "workspaces", chatHexName(ALICE)), model));
  put(join(data, "pi-agent", chatHexName(ALICE), "settings.json"), '{"defaultThinkingLevel":"low"}');
  put(join(data, "attachments", turnsName(ALICE), "att_old"), "attachment bytes");
  put(join(data, "artifacts", turnsName(ALICE), "art_old"), "artifact bytes");
  db.run("INSERT INTO chat_sessions (owner_id, id, session_file, title) VALUES (?, ?, ?, ?)", [
    ALICE,
    SESSION_ID,
    join(oldSessions, SESSION_FILE),
    "old chat",
  ]);
  db.run(
    "INSERT INTO turn_attachments (id, owner_id, filename, media_type, byte_size, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ["att_old", ALICE, "a.txt", "text/plain", 16, sha("attachment bytes"), at],
  );
  db.run("INSERT INTO turn_sessions (id, owner_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)", [
    "ses_old",
    ALICE,
    "old",
    at,
    at,
  ]);
  db.run(
    "INSERT INTO turn_runs (id, owner_id, session_id, idempotency_key, fingerprint, input_json, status, committed, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ["run_old", ALICE, "ses_old", "k", "f", "{}", "completed", 1, at],
  );
  db.run(
    "INSERT INTO turn_artifacts (id, owner_id, run_id, kind, title, media_type, byte_size, sha256, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ["art_old", ALICE, "run_old", "file", "A", "text/plain", 14, sha("artifact bytes"), "committed", at],
  );
  // Bob: a long id, so chat's old name is the cut hex; his provider key is the row that names him.
  put(join(data, "pi-agent", chatHexName(BOB), "models.json"), '{"providers":{}}');
  put(join(data, "workspaces", turnsName(BOB), "files", "bob.txt"), "bob's");
  db.run("INSERT INTO chat_provider_keys (owner_id, provider, api_key) VALUES (?, ?, ?)", [
    BOB,
    "openai",
    "k",
  ]);
  // Carol: no row; her turns folder's name reads back to her id.
  put(join(data, "workspaces", turnsName(CAROL), "files", "carol.txt"), "carol's");
  // The twins shared one chat folder under the old scheme: whose it is cannot be known.
  put(join(data, "workspaces", chatHexName(TWIN1), "files", "whose.txt"), "either");
  for (const twin of [TWIN1, TWIN2])
    db.run("INSERT INTO turn_sessions (id, owner_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)", [
      `ses_${twin.slice(-3)}`,
      twin,
      "twin",
      at,
      at,
    ]);
}

describe("startup migration over a data dir of the earlier builds", () => {
  let t: TestApp;
  let model: Scripted;
  let logs: ReturnType<typeof memoryLogger>;
  beforeAll(async () => {
    logs = memoryLogger();
    t = await createTestApp({
      // The earlier builds kept their rows in app.db only (their data dir is what this test writes), so
      // this app stays there in the PostgreSQL run too: moving rows to PostgreSQL is not a startup step.
      env: {
        APP_CHAT_RUNTIME_REQUIRE_AUTH: "1",
        APP_CHAT_DATABASE_URL: "sqlite",
        APP_SANDBOX_WARM: "0",
        APP_DATABASE_URL: "",
      },
      resolvers: [resolver],
      compose: false,
      log: logs.log,
    });
    migrate(t.ctx.db!, migrationSets());
    model = scripted(t, []);
    const [provider, id] = model.id.split("/") as [string, string];
    writeOldLayout(t.dataDir, t.ctx.db!, { provider, id });
    await t.compose();
  });
  afterAll(async () => {
    model.dispose();
    await t.close();
  });

  test("chat resume shows the old messages, from the moved file, with a header naming today's workspace", async () => {
    const hydrated = await t.json<{
      messages: Event[];
      sessionReset: boolean;
      session: { sessionFile: string };
    }>(`/api/chat/session?sessionId=${SESSION_ID}`, as("alice"));
    expect(hydrated.status).toBe(200);
    expect(hydrated.body.sessionReset).toBe(false);
    expect(JSON.stringify(hydrated.body.messages)).toContain("hello from the old build");
    expect(hydrated.body.session.sessionFile).toBe(SESSION_FILE);
    const folders = ownerFolders(t.dataDir, ALICE);
    const header = JSON.parse(
      readFileSync(join(folders.sessions, SESSION_FILE), "utf8").split("\n")[0] as string,
    );
    expect(header.cwd).toBe(folders.workspace);
    const row = t.ctx
      .db!.query<{ session_file: string }, [string]>("SELECT session_file FROM chat_sessions WHERE id = ?")
      .get(SESSION_ID);
    expect(row?.session_file).toBe(join(folders.sessions, SESSION_FILE));
  });

  test("the resumed chat's agent works in the one merged workspace: chat's files and turns' files/", async () => {
    model.append([
      fauxAssistantMessage(
        [
          fauxToolCall("read", { path: "chat-notes.md" }, { id: "chat" }),
          fauxToolCall("read", { path: "files/report.txt" }, { id: "turns" }),
          fauxToolCall("read", { path: "later.md" }, { id: "later" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("all there"),
    ]);
    const events = await lines(
      await t.request(
        "/api/chat",
        postJson({ message: "read", model: model.id, sessionId: SESSION_ID }, as("alice").headers),
      ),
    );
    expect(events[0]?.sessionId).toBe(SESSION_ID);
    const results = events.filter((e) => e.type === "tool" && e.part.output !== undefined);
    const text = (id: string) => JSON.stringify(results.find((e) => e.part.toolCallId === id)?.part.output);
    expect(text("chat")).toContain("chat notes");
    expect(text("turns")).toContain("turns file");
    expect(text("later")).toContain("written after issue 12");
  });

  test("the turns Files API lists the moved files; a name taken twice keeps both contents", async () => {
    const listed = await t.json<{ items: { path: string }[] }>("/api/files", as("alice"));
    expect(listed.body.items.map((i) => i.path).sort()).toEqual([
      "report.txt",
      "same.migrated.txt",
      "same.txt",
    ]);
    const read = async (path: string) =>
      (await t.json<{ content: string }>(`/api/files/content?path=${path}`, as("alice"))).body.content;
    expect(new Set([await read("same.txt"), await read("same.migrated.txt")])).toEqual(
      new Set(["from turns", "from chat"]),
    );
    expect((await t.json<{ items: { path: string }[] }>("/api/files", as("bob"))).body.items).toEqual([
      expect.objectContaining({ path: "bob.txt" }),
    ]);
    expect((await t.json<{ items: { path: string }[] }>("/api/files", as("carol"))).body.items).toEqual([
      expect.objectContaining({ path: "carol.txt" }),
    ]);
  });

  test("attachments and artifacts are found at their new place, bytes checked", async () => {
    expect((await t.json("/api/attachments/att_old", as("alice"))).status).toBe(200);
    const content = await t.request("/api/artifacts/art_old/content", as("alice"));
    expect(content.status).toBe(200);
    expect(await content.text()).toBe("artifact bytes");
  });

  test("nothing is left at an old name, except the folder two owners could own", () => {
    const left = (root: string) => readdirSync(join(t.dataDir, root)).sort();
    const alice = ownerFolders(t.dataDir, ALICE);
    expect(existsSync(join(alice.piAgent, "settings.json"))).toBe(true);
    expect(existsSync(join(ownerFolders(t.dataDir, BOB).piAgent, "models.json"))).toBe(true);
    const today = (owner: string) => basename(ownerFolders(t.dataDir, owner).workspace);
    expect(left("workspaces")).toEqual([today(ALICE), today(BOB), today(CAROL), chatHexName(TWIN1)].sort());
    expect(left("sessions")).toEqual([today(ALICE)]);
    expect(left("pi-agent")).toEqual([today(ALICE), today(BOB)].sort());
    expect(left("attachments")).toEqual([today(ALICE)]);
    expect(left("artifacts")).toEqual([today(ALICE)]);
    // The twins' shared folder stays (moving it to either would give one the other's files), with a warning.
    expect(
      logs.lines().find((l) => l.msg === "owner folder left in place: more than one owner could own it"),
    ).toMatchObject({
      folder: `workspaces/${chatHexName(TWIN1)}`,
    });
  });

  test("neither twin sees the folder they both could own", async () => {
    const listed = await t.json<{ items: unknown[] }>("/api/files", as("twin1"));
    expect(listed).toMatchObject({ status: 200, body: { items: [] } });
  });

  test("runs once: recorded, and a second run finds nothing to do", async () => {
    expect(await t.ctx.database.all("SELECT name FROM data_dir_steps")).toEqual([
      { name: OWNER_FOLDERS_STEP },
    ]);
    expect(await migrateOwnerFolders(t.ctx)).toBeUndefined();
    const again = await moveOwnerFolders(t.dataDir, t.ctx.database);
    expect(again).toMatchObject({
      moved: [],
      renamed: [],
      sessionFilesRewritten: 0,
      sessionRowsRewritten: 0,
    });
  });
});

describe("crash safety", () => {
  test("a run stopped halfway (some entries moved, header and row not yet rewritten) is finished by the next", async () => {
    const dir = tempDir();
    const db = new Database(join(dir.path, "app.db"));
    migrate(db, migrationSets());
    const folders = ownerFolders(dir.path, ALICE);
    const oldWorkspace = join(dir.path, "workspaces", chatHexName(ALICE));
    // The sessions folder was already renamed; its header and row still name the old places.
    put(join(folders.sessions, SESSION_FILE), sessionJsonl(oldWorkspace, { provider: "p", id: "m" }));
    db.run("INSERT INTO chat_sessions (owner_id, id, session_file) VALUES (?, ?, ?)", [
      ALICE,
      SESSION_ID,
      join(dir.path, "sessions", chatHexName(ALICE), SESSION_FILE),
    ]);
    // The workspace merge had moved one entry of two.
    put(join(folders.workspace, "moved.txt"), "moved");
    put(join(oldWorkspace, "not-yet.txt"), "not yet");
    const result = await moveOwnerFolders(dir.path, sqlitePort(db));
    expect(result.moved).toHaveLength(1);
    expect(readdirSync(folders.workspace).sort()).toEqual(["moved.txt", "not-yet.txt"]);
    expect(existsSync(oldWorkspace)).toBe(false);
    const header = JSON.parse(
      readFileSync(join(folders.sessions, SESSION_FILE), "utf8").split("\n")[0] as string,
    );
    expect(header.cwd).toBe(folders.workspace);
    // The rest of the file is byte for byte what it was.
    expect(readFileSync(join(folders.sessions, SESSION_FILE), "utf8").split("\n").slice(1).join("\n")).toBe(
      sessionJsonl(oldWorkspace, { provider: "p", id: "m" }).split("\n").slice(1).join("\n"),
    );
    expect(db.query("SELECT session_file FROM chat_sessions").get()).toEqual({
      session_file: join(folders.sessions, SESSION_FILE),
    });
    db.close();
    dir.remove();
  });

  test("merging never overwrites: symlinks move as links, taken names get a free one", () => {
    const dir = tempDir();
    put(join(dir.path, "a", "x.txt"), "a");
    put(join(dir.path, "a", "sub", "y"), "a-y");
    put(join(dir.path, "b", "x.txt"), "b");
    put(join(dir.path, "b", "x.migrated.txt"), "b2");
    put(join(dir.path, "b", "sub", "y"), "b-y");
    symlinkSync("/etc", join(dir.path, "a", "sub", "link"));
    const report = moveMerging(join(dir.path, "a"), join(dir.path, "b"));
    expect(existsSync(join(dir.path, "a"))).toBe(false);
    expect(readFileSync(join(dir.path, "b", "x.migrated-2.txt"), "utf8")).toBe("a");
    expect(readFileSync(join(dir.path, "b", "sub", "y.migrated"), "utf8")).toBe("a-y");
    expect(readFileSync(join(dir.path, "b", "x.txt"), "utf8")).toBe("b");
    expect(lstatSync(join(dir.path, "b", "sub", "link")).isSymbolicLink()).toBe(true);
    expect(report.renamed.sort((p, q) => p.from.localeCompare(q.from))).toEqual([
      { from: "sub/y", to: "sub/y.migrated" },
      { from: "x.txt", to: "x.migrated-2.txt" },
    ]);
    dir.remove();
  });
});

describe("folders no row names", () => {
  test("chat's uncut hex name reads back to its owner, unless an owner of that very id exists", () => {
    const dir = tempDir();
    const dave = "dave@example.com";
    put(join(dir.path, "sessions", chatHexName(dave), SESSION_FILE), "{}");
    put(join(dir.path, "pi-agent", chatHexName("a@b"), "settings.json"), "{}");
    // Someone whose id is literally x614062 holds that folder today: it is theirs, not a@b's.
    const plan = planMoves(dir.path, new Set(["local", chatHexName("a@b")]));
    expect(plan.moves).toEqual([
      { root: "sessions", from: chatHexName(dave), to: chatShaName(dave), owner: dave },
    ]);
    expect(planMoves(dir.path, new Set(["local"])).moves).toContainEqual({
      root: "pi-agent",
      from: chatHexName("a@b"),
      to: chatShaName("a@b"),
      owner: "a@b",
    });
    dir.remove();
  });
});
