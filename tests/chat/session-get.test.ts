/**
 * A GET never creates a chat session: a link or a Markdown image in a message makes the viewer's
 * browser send GETs with their cookie, so `GET /api/chat/session` with an id the caller does not own
 * (another user's, or none at all) is 404, not a fresh empty session of theirs, and so is asking for the
 * latest when there is none or naming a session whose file cannot be read. Every other chat GET route
 * is checked the same way: the owner's session rows, live sessions and session files do not change.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { lines } from "../helpers/streams.ts";
import { asUser, twoUsers } from "../helpers/users.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(twoUsers());
});
afterAll(() => t.close());

const host = () => t.family("chat").runtime.host;

/** What a created session leaves behind for `owner`: mirror rows, live sessions, session files. */
async function footprint(owner: string) {
  const rows = (
    await t.ctx.database.get<{ n: number }>("SELECT count(*) AS n FROM chat_sessions WHERE owner_id = ?", [
      owner,
    ])
  )?.n;
  let files: string[] = [];
  try {
    files = readdirSync(join(t.dataDir, "sessions", owner));
  } catch {}
  return { rows, live: host().ownerSessions(owner).length, files: files.length };
}

async function sessionOf(owner: string, text: string) {
  const model = scripted(t, [fauxAssistantMessage(`re: ${text}`)]);
  const events = await lines(
    await t.request("/api/chat", postJson({ message: text, model: model.id }, asUser(owner))),
  );
  model.dispose();
  expect(events.at(-1)?.type).toBe("done");
  return { sessionId: events[0]?.sessionId as string, sessionFile: events[0]?.sessionFile as string };
}

test("another owner's id or file, an unknown id, or no session at all: 404, and nothing is created", async () => {
  const alice = await sessionOf("alice", "alice's chat");
  const bobBefore = await footprint("bob");
  for (const query of [
    `sessionId=${alice.sessionId}`,
    `sessionFile=${encodeURIComponent(alice.sessionFile)}`,
    "sessionId=never-existed",
    "sessionFile=never-existed.jsonl",
    "", // bob has no session: there is no latest to show
  ]) {
    const response = await t.request(`/api/chat/session?${query}`, { headers: asUser("bob") });
    expect({ query, status: response.status }).toEqual({ query, status: 404 });
    expect(await response.json()).toEqual({ message: "No such chat session" });
  }
  expect(await footprint("bob")).toEqual(bobBefore);

  // The owner sees hers, by id, by file, and as the latest.
  for (const query of [`sessionId=${alice.sessionId}`, `sessionFile=${alice.sessionFile}`, ""]) {
    const own = await t.json<{ session: { id: string }; messages: unknown[]; sessionReset: boolean }>(
      `/api/chat/session?${query}`,
      { headers: asUser("alice") },
    );
    expect(own.status).toBe(200);
    expect(own.body.session.id).toBe(alice.sessionId);
    expect(own.body.sessionReset).toBe(false);
    expect(own.body.messages.length).toBe(2);
  }
});

test("a session whose file cannot be read is 404 on GET, and the fresh one the runtime made is gone again", async () => {
  const carol = await sessionOf("carol", "soon unreadable");
  await host().closeOwner("carol");
  writeFileSync(join(t.dataDir, "sessions", "carol", carol.sessionFile), "not a session file\n");
  const before = await footprint("carol");
  const response = await t.request(`/api/chat/session?sessionId=${carol.sessionId}`, {
    headers: asUser("carol"),
  });
  expect(response.status).toBe(404);
  expect(await footprint("carol")).toEqual(before);
  // POST /api/chat/resume keeps the reference client's behaviour: a fresh session with sessionReset.
  const resumed = await t.json<{ sessionReset: boolean }>(
    "/api/chat/resume",
    postJson({ sessionId: carol.sessionId }, asUser("carol")),
  );
  expect(resumed.body.sessionReset).toBe(true);
});

test("no chat GET route creates a session, whatever its query names", async () => {
  const dave = await sessionOf("dave", "dave's only chat");
  await host().closeOwner("dave");
  const before = await footprint("dave");
  const doc = (await (await t.request("/swagger/json")).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const chatPaths = Object.entries(doc.paths)
    .filter(([path, ops]) => "get" in ops && /^\/api\/(chat|workspace|sandbox|attach)/.test(path))
    .map(([path]) => path);
  expect(chatPaths).toContain("/api/chat/session");
  expect(chatPaths.length).toBeGreaterThan(10);
  const query = new URLSearchParams({
    sessionId: "made-up-id",
    sessionFile: "made-up.jsonl",
    runId: "run_made_up",
    path: "notes.md",
    id: "item-1",
    q: "anything",
    provider: "openai",
  });
  for (const path of chatPaths) {
    for (const suffix of [`?${query}`, "", `?sessionId=${dave.sessionId}`]) {
      const response = await t.request(`${path.replace(/\{[^}]+\}/g, "x")}${suffix}`, {
        headers: asUser("dave"),
      });
      await response.arrayBuffer();
      expect({ path, suffix, status: response.status < 500 }).toEqual({ path, suffix, status: true });
      // Reading the owner's own session opens it (live) but makes no new one.
      const now = await footprint("dave");
      expect({ path, suffix, rows: now.rows, files: now.files }).toEqual({
        path,
        suffix,
        rows: before.rows,
        files: before.files,
      });
      expect(now.live).toBeLessThanOrEqual(1);
    }
  }
});
