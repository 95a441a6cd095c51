// biome-ignore-all lint/suspicious/noExplicitAny: response bodies in tests are read loosely; the assertions check them.
/**
 * A team server end to end on a real listening port: two people sign up and sign in, each chats, runs
 * a Python turn, builds a search index and talks to an agent over the WebSocket (session token as
 * auth_token), and neither sees anything of the other's, in any family.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { authApp, PASSWORD } from "../auth/auth-app.ts";
import { chat } from "../helpers/agents.ts";
import type { TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { readFrames } from "../helpers/streams.ts";

setDefaultTimeout(120_000);

let t: TestApp;
let s: { url: string; stop(): Promise<void> };
beforeAll(async () => {
  t = await authApp({ serving: true, env: { APP_SANDBOX_WARM: "1", APP_CHAT_DATABASE_URL: "sqlite" } });
  s = listen(t);
});
afterAll(async () => {
  await s.stop();
  await t.close();
});

interface Person {
  word: string;
  token: string;
  headers: Record<string, string>;
  chatSession: string;
  turnSession: string;
  index: string;
  agent: string;
  wsSession: string;
}

async function call<T = any>(
  path: string,
  init: RequestInit & { json?: unknown } = {},
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${s.url}${path}`, {
    ...init,
    headers: { ...(init.json !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
  });
  const text = await response.text();
  let body: T;
  try {
    body = JSON.parse(text) as T;
  } catch {
    body = text as T;
  }
  return { status: response.status, body, response };
}

async function onboard(email: string, word: string): Promise<Person> {
  const up = await call("/api/auth/sign-up/email", { method: "POST", json: { email, password: PASSWORD } });
  expect(up.status).toBe(200);
  const signIn = await call<{ token: string }>("/api/auth/sign-in/email", {
    method: "POST",
    json: { email, password: PASSWORD },
  });
  expect(signIn.status).toBe(200);
  const token = signIn.body.token;
  const headers = { authorization: `Bearer ${token}` };

  const chatStream = await call<string>(
    "/api/chat",
    { method: "POST", json: { message: `hello from ${word}` } },
    headers,
  );
  const events = String(chatStream.body)
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  expect(events.at(-1)?.type).toBe("done");
  const chatSession = events[0]?.sessionId as string;

  const created = await call<{ id: string }>(
    "/api/sessions",
    { method: "POST", json: { title: word } },
    headers,
  );
  const turnSession = created.body.id;
  const turn = await fetch(`${s.url}/api/sessions/${turnSession}/turns`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
    body: JSON.stringify({ text: `\`\`\`python\nprint("${word}" * 2)\n\`\`\`` }),
  });
  expect(turn.status).toBe(200);
  const frames = await readFrames(turn);
  expect(frames.map((f) => f.data).join("\n")).toContain(`${word}${word}`);

  const index = await call<{ name?: string; id?: unknown }>(
    "/search/index",
    {
      method: "POST",
      json: { name: `${word}-notes`, documents: [{ name: "n", text: `The ${word} project ships in June.` }] },
    },
    headers,
  );
  expect(index.status).toBe(200);

  const agent = await call<{ id: string }>(
    "/v1/agents",
    { method: "POST", json: { name: `${word} helper`, role: "helps" } },
    headers,
  );
  expect(agent.status).toBe(200);
  const ws = await chat(s.url, { target_id: agent.body.id, target_type: "agent", auth_token: token });
  const { session_id } = await ws.next((f) => f.type === "connected");
  const reply = await ws.ask(`remember ${word}`);
  expect(reply.length).toBeGreaterThan(0);
  ws.close();
  return {
    word,
    token,
    headers,
    chatSession,
    turnSession,
    index: `${word}-notes`,
    agent: agent.body.id,
    wsSession: session_id,
  };
}

test("two users each use every family; neither sees the other's chats, turns, files, indexes, agents or sockets", async () => {
  const ann = await onboard("ann@example.org", "ann");
  const bob = await onboard("bob@example.org", "bob");

  for (const [me, other] of [
    [ann, bob],
    [bob, ann],
  ] as const) {
    const chats = await call<{ sessions: { id: string }[] }>("/api/chat/sessions", {}, me.headers);
    expect(chats.body.sessions.map((x) => x.id)).toEqual([me.chatSession]);
    expect((await call(`/api/chat/session?sessionId=${other.chatSession}`, {}, me.headers)).status).toBe(404);
    expect(
      (await call(`/api/chat/session?sessionId=${other.chatSession}`, { method: "DELETE" }, me.headers))
        .status,
    ).toBe(404);

    const turns = await call<{ items: { id: string }[] }>("/api/sessions", {}, me.headers);
    expect(turns.body.items.map((x) => x.id)).toEqual([me.turnSession]);
    expect((await call(`/api/sessions/${other.turnSession}`, {}, me.headers)).status).toBe(404);
    expect((await call(`/api/sessions/${other.turnSession}/turns`, {}, me.headers)).status).toBe(404);

    const indexes = await call<{ indexes: { name: string }[] }>("/search/indexes", {}, me.headers);
    expect(indexes.body.indexes.map((x) => x.name)).toEqual([me.index]);
    const search = await call(
      "/search/local",
      { method: "POST", json: { query: "project", index: other.index } },
      me.headers,
    );
    // The other's index does not exist for me: nothing of its text comes back.
    expect(search.status).toBe(200);
    expect(JSON.stringify(search.body)).not.toContain(`${other.word} project`);

    const agents = await call<{ agents?: { id: string }[]; items?: { id: string }[] }>(
      "/v1/agents",
      {},
      me.headers,
    );
    expect(JSON.stringify(agents.body)).toContain(me.agent);
    expect(JSON.stringify(agents.body)).not.toContain(other.agent);
    expect((await call(`/v1/agents/${other.agent}`, {}, me.headers)).status).toBe(404);
    expect((await call(`/v1/chat/sessions/${other.wsSession}/history`, {}, me.headers)).status).toBe(404);
    const theirs = await chat(s.url, { session_id: other.wsSession, auth_token: me.token });
    expect((await theirs.closed).code).toBe(4404);
  }
  // Signed out, the token is worthless everywhere.
  await call("/api/auth/sign-out", { method: "POST" }, ann.headers);
  expect((await call("/api/chat/sessions", {}, ann.headers)).status).toBe(401);
  expect((await call("/v1/agents", {}, ann.headers)).status).toBe(401);
});
