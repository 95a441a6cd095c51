/** Session routes: new, resume, hydrate, list, abort, eviction and resume from the file. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { createTestApp, postJson, type TestApp } from "../helpers/app.ts";
import { chat, scripted } from "../helpers/chat.ts";
import { type Event, eventReader, lines } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const host = () => t.family("chat").runtime.host;

test("new → chat in it → hydrate and resume show the messages; the list is newest first with titles", async () => {
  const model = scripted(t, [fauxAssistantMessage("First answer."), fauxAssistantMessage("Second answer.")]);
  const created = await t.json<{ sessionFile: string; sessionId: string }>("/api/chat/new", {
    method: "POST",
  });
  expect(created.status).toBe(200);
  expect(created.body.sessionFile).toMatch(/^[\w.-]+\.jsonl$/);
  const { sessionId, sessionFile } = created.body;

  const first = await lines(
    await chat(t, { sessionId, sessionFile, message: "Plan my week", model: model.id }),
  );
  expect(first[0]).toMatchObject({ type: "start", sessionId, sessionFile });
  expect(first[0]?.sessionReset).toBeUndefined();
  expect(existsSync(`${t.dataDir}/sessions/local/${sessionFile}`)).toBe(true);

  const other = await lines(await chat(t, { message: "Another chat", model: model.id }));
  expect(other[0]?.sessionId).not.toBe(sessionId);

  const hydrated = await t.json<Event>(`/api/chat/session?sessionId=${sessionId}`);
  expect(hydrated.status).toBe(200);
  expect(hydrated.body.sessionReset).toBe(false);
  expect(hydrated.body.session).toMatchObject({
    id: sessionId,
    sessionFile,
    title: "Plan my week",
    model: model.id,
  });
  expect(hydrated.body.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);

  const resumed = await t.json<Event>("/api/chat/resume", postJson({ sessionFile }));
  expect(resumed.body.session.id).toBe(sessionId);
  expect(resumed.body.messages).toHaveLength(2);

  const list = await t.json<{ sessions: Event[] }>("/api/chat/sessions");
  expect(list.body.sessions.map((s) => s.title)).toEqual(["Another chat", "Plan my week"]);
  expect(list.body.sessions[1]).toMatchObject({ id: sessionId, sessionFile });
  expect(typeof list.body.sessions[0]?.updatedAt).toBe("string");
  const paged = await t.json<{ sessions: unknown[] }>("/api/chat/sessions?limit=1&offset=1");
  expect(paged.body.sessions).toHaveLength(1);
  model.dispose();
});

test("an evicted session resumes from its file with its history", async () => {
  const model = scripted(t, [
    fauxAssistantMessage("Remember: blue."),
    fauxAssistantMessage("You said blue."),
  ]);
  const first = await lines(await chat(t, { message: "My colour is blue", model: model.id }));
  const { sessionId, sessionFile } = first[0] ?? {};
  expect(host().find("local", { sessionId })).toBeDefined();
  host().sweep(Date.now() + 24 * 3600_000);
  expect(host().find("local", { sessionId })).toBeUndefined();

  const second = await lines(
    await chat(t, { sessionId, sessionFile, message: "What is my colour?", model: model.id }),
  );
  expect(second[0]).toMatchObject({ type: "start", sessionId, sessionFile });
  expect(second[0]?.sessionReset).toBeUndefined();
  expect(second.at(-1)?.type).toBe("done");
  const hydrated = await t.json<Event>(`/api/chat/session?sessionId=${sessionId}`);
  expect(hydrated.body.messages.map((m: { role: string }) => m.role)).toEqual([
    "user",
    "assistant",
    "user",
    "assistant",
  ]);
  model.dispose();
});

test("the pool stays bounded: idle sessions over the limit are evicted, least recently used first", async () => {
  const model = scripted(t, []);
  const before = host().size;
  const created: string[] = [];
  for (let i = 0; i < host().maxIdleSessions + 3; i++) {
    const { body } = await t.json<{ sessionId: string }>("/api/chat/new", { method: "POST" });
    created.push(body.sessionId);
  }
  expect(host().size).toBeLessThanOrEqual(host().maxIdleSessions);
  expect(host().find("local", { sessionId: created.at(-1) })).toBeDefined();
  expect(host().find("local", { sessionId: created[0] })).toBeUndefined();
  expect(before).toBeLessThanOrEqual(host().maxIdleSessions);
  // Evicted before its first message (pi had not written its file yet): it reopens with the same id.
  const reopened = await t.json<Event>(`/api/chat/session?sessionId=${created[0]}`);
  expect(reopened.body).toMatchObject({ sessionReset: false, session: { id: created[0] } });
  model.dispose();
});

test("a session that cannot be opened comes back fresh with sessionReset", async () => {
  const model = scripted(t, [fauxAssistantMessage("fresh")]);
  const events = await lines(
    await chat(t, { sessionFile: "gone.jsonl", message: "hello?", model: model.id }),
  );
  expect(events[0]).toMatchObject({ type: "start", sessionReset: true });
  expect(events.at(-1)).toMatchObject({ type: "done", sessionReset: true });
  // Resuming by POST comes back fresh; a GET never makes a session (tests/chat/session-get.test.ts).
  const resumed = await t.json<Event>("/api/chat/resume", postJson({ sessionId: "never-existed" }));
  expect(resumed.body.sessionReset).toBe(true);
  expect(resumed.body.messages).toEqual([]);
  expect((await t.request("/api/chat/session?sessionId=never-existed")).status).toBe(404);
  model.dispose();
});

test("abort mid-stream: the stream ends with an error, the run is recorded as aborted", async () => {
  const model = scripted(t, [fauxAssistantMessage("word ".repeat(400))], { tokensPerSecond: 200 });
  const reader = eventReader(await chat(t, { message: "talk a lot", model: model.id }));
  const start = await reader.until((e) => e.type === "start");
  await reader.until((e) => e.type === "delta");
  const aborted = await t.json("/api/chat/abort", postJson({ sessionId: start.sessionId }));
  expect(aborted.body).toEqual({ aborted: true });
  const events = await reader.rest();
  expect(events.at(-1)).toMatchObject({ type: "error", runId: start.runId, message: "Run aborted" });
  const provenance = await t.json<Event>(`/api/chat/provenance?runId=${start.runId}`);
  expect(provenance.body.status).toBe("aborted");
  expect((await t.json("/api/chat/abort", postJson({ sessionId: start.sessionId }))).body).toEqual({
    aborted: false,
  });
  model.dispose();
});

test("a client disconnect aborts the run", async () => {
  const model = scripted(t, [fauxAssistantMessage("word ".repeat(400))], { tokensPerSecond: 200 });
  const reader = eventReader(await chat(t, { message: "talk a lot", model: model.id }));
  const start = await reader.until((e) => e.type === "start");
  await reader.until((e) => e.type === "delta");
  await reader.cancel();
  const live = host().find("local", { sessionId: start.sessionId });
  await waitFor(() => live?.activeRunId === undefined, { what: "the run to end" });
  const provenance = await t.json<Event>(`/api/chat/provenance?runId=${start.runId}`);
  expect(provenance.body.status).toBe("aborted");
  model.dispose();
});

test("concurrent requests for one evicted session share a single live session", async () => {
  const model = scripted(t, [fauxAssistantMessage("one")]);
  const first = await lines(await chat(t, { message: "hello", model: model.id }));
  const sessionId = first[0]?.sessionId;
  host().sweep(Date.now() + 24 * 3600_000);
  const [a, b] = await Promise.all([
    t.json<Event>(`/api/chat/session?sessionId=${sessionId}`),
    t.json<Event>(`/api/chat/session?sessionId=${sessionId}`),
  ]);
  expect(a.body.session.id).toBe(sessionId);
  expect(b.body.session.id).toBe(sessionId);
  expect(
    host()
      .ownerSessions("local")
      .filter((l) => l.sessionId === sessionId),
  ).toHaveLength(1);
  model.dispose();
});

test("a client that goes away before reading anything does not leave the session busy", async () => {
  const model = scripted(t, [fauxAssistantMessage("word ".repeat(400)), fauxAssistantMessage("next")], {
    tokensPerSecond: 400,
  });
  const { sessionId } = (await t.json<{ sessionId: string }>("/api/chat/new", { method: "POST" })).body;
  const response = await chat(t, { sessionId, message: "long", model: model.id });
  await response.body?.cancel();
  const live = host().find("local", { sessionId });
  await waitFor(() => live?.activeRunId === undefined, { what: "the run to end" });
  const next = await lines(await chat(t, { sessionId, message: "again", model: model.id }));
  expect(next.at(-1)?.type).toBe("done");
  model.dispose();
});

test("an unreadable session file gives a fresh session with sessionReset and is left untouched", async () => {
  const model = scripted(t, [fauxAssistantMessage("fresh start")]);
  const dir = `${t.dataDir}/sessions/local`;
  await Bun.write(`${dir}/broken.jsonl`, "this is not a session\n");
  const events = await lines(await chat(t, { sessionFile: "broken.jsonl", message: "hi", model: model.id }));
  expect(events[0]).toMatchObject({ type: "start", sessionReset: true });
  expect(events[0]?.sessionFile).not.toBe("broken.jsonl");
  expect(await Bun.file(`${dir}/broken.jsonl`).text()).toBe("this is not a session\n");
  model.dispose();
});
