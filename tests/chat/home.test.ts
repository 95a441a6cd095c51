/**
 * Home instances (issue 28, item 4): two apps on one data dir and one database (app.db, or the run's
 * PostgreSQL database with ATRIUM_TEST_DATABASE=postgres), each listening on loopback with its address in
 * APP_INSTANCE_URL. A user's chat runs on the instance holding their `home` lease: a request that lands on
 * the other one is forwarded there and streams back (abort, /api/attach and MCP sessions included); when
 * the home instance stops renewing, the other takes the home over once the lease lapses, never before;
 * and the instance that lost it stops writing. A caller cannot be routed into another user's home, and a forward carries nothing but
 * the caller's own request.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { forwardHome } from "../../server/chat/home/forward.ts";
import { HOME_LEASE } from "../../server/chat/home/homes.ts";
import { homeValue } from "../../server/chat/home/routing.ts";
import { authApp, databaseEnvOf, SECRET, type SignedUser, signUp } from "../auth/auth-app.ts";
import { postJson, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { freePort } from "../helpers/mcp.ts";
import { type Event, eventReader, lines } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";

setDefaultTimeout(60_000);

/** Short leases, so a lapse takes seconds (not so short that a loaded machine misses a heartbeat). */
const LEASE_MS = 2000;

interface Node {
  t: TestApp;
  url: string;
  /** Stops listening (the app stays up: its heartbeat goes on unless stopped too). */
  unlisten(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

async function node(env: Record<string, string>, dataDir?: string): Promise<Node> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const t = await authApp({
    env: { APP_LEASE_MS: String(LEASE_MS), APP_INSTANCE_URL: url, ...env },
    ...(dataDir ? { dataDir } : {}),
  });
  t.app.listen({ hostname: "127.0.0.1", port, reusePort: false, development: false });
  const server = t.app.server;
  let listening = true;
  const unlisten = async () => {
    if (listening) await server?.stop(true);
    listening = false;
  };
  cleanups.push(async () => {
    await unlisten();
    await t.close();
  });
  return { t, url, unlisten };
}

/** Instance A, and B on A's data dir and database. */
async function twoInstances(): Promise<[Node, Node]> {
  const a = await node({});
  const b = await node(databaseEnvOf(a.t), a.t.dataDir);
  return [a, b];
}

const chatOn = (n: Node, user: SignedUser, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${n.url}/api/chat`, postJson(body, { ...user.bearer, ...headers }));

const holder = async (n: Node, owner: string) => (await n.t.ctx.leases.get(HOME_LEASE, owner))?.holder;

describe("forwarding to the home instance", () => {
  test("a chat request that lands on B runs on A, the user's home, and streams back through B", async () => {
    const [a, b] = await twoInstances();
    const ann = await signUp(a.t, "ann@example.org");
    // The model exists on A only: B could not answer the turn by itself.
    const model = scripted(a.t, [fauxAssistantMessage("at home"), fauxAssistantMessage("still at home")]);
    const first = await lines(await chatOn(a, ann, { message: "hi", model: model.id }));
    expect(first.at(-1)?.type).toBe("done");
    expect(await holder(a, ann.id)).toBe(a.t.ctx.instanceId);

    const second = await lines(
      await chatOn(b, ann, { sessionId: first[0]?.sessionId, message: "again", model: model.id }),
    );
    expect(second.at(-1)?.type).toBe("done");
    expect(
      second
        .filter((e) => e.type === "delta")
        .map((e) => e.text)
        .join(""),
    ).toContain("still at home");
    expect(model.calls()).toBe(2);
    expect(b.t.family("chat").home.homes.holds(ann.id)).toBe(false);
    expect(await holder(a, ann.id)).toBe(a.t.ctx.instanceId);
  });

  test("a turn forwarded through B streams live, and an abort sent to B stops it on A", async () => {
    const [a, b] = await twoInstances();
    const bea = await signUp(a.t, "bea@example.org");
    // Bea's home is A (her first request went there).
    expect((await a.t.request("/api/chat/sessions", { headers: bea.bearer })).status).toBe(200);
    const model = scripted(a.t, [fauxAssistantMessage("word ".repeat(400))], { tokensPerSecond: 200 });
    const reader = eventReader(await chatOn(b, bea, { message: "talk a lot", model: model.id }));
    const start = await reader.until((e) => e.type === "start");
    // The first words come through B while the run still goes on (a buffered forward would hold them).
    await reader.until((e) => e.type === "delta");
    const aborted = await fetch(
      `${b.url}/api/chat/abort`,
      postJson({ sessionId: start.sessionId }, bea.bearer),
    );
    expect(await aborted.json()).toEqual({ aborted: true });
    const events = await reader.rest();
    expect(events.at(-1)).toMatchObject({ type: "error", runId: start.runId, message: "Run aborted" });
    const provenance = await a.t.json<Event>(`/api/chat/provenance?runId=${start.runId}`, {
      headers: bea.bearer,
    });
    expect(provenance.body.status).toBe("aborted");
  });
  test("/api/attach through B streams the live events of a session held on A", async () => {
    const [a, b] = await twoInstances();
    const ida = await signUp(a.t, "ida@example.org");
    const model = scripted(a.t, [fauxAssistantMessage("first"), fauxAssistantMessage("seen through B")]);
    const first = await lines(await chatOn(a, ida, { message: "hi", model: model.id }));
    const sessionId = first[0]?.sessionId as string;
    // An SSE stream that never ends by itself: only a streaming forward shows its frames.
    const attached = await fetch(`${b.url}/api/attach`, postJson({ sessionId }, ida.bearer));
    expect(attached.status).toBe(200);
    const reader = (attached.body as ReadableStream<Uint8Array>).getReader();
    let seen = "";
    const read = async (until: string) => {
      while (!seen.includes(until)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`attach ended: ${seen}`);
        seen += new TextDecoder().decode(value);
      }
    };
    await read("event: attached");
    expect(await lines(await chatOn(a, ida, { sessionId, message: "again", model: model.id }))).not.toEqual(
      [],
    );
    await read("seen through B");
    await reader.cancel();
  });

  test("an MCP session opened on the home instance is used through the other one", async () => {
    const [a, b] = await twoInstances();
    const jo = await signUp(a.t, "jo@example.org");
    const created = await a.t.json<{ token: string }>(
      "/api/auth/tokens",
      postJson({ name: "mcp", scopes: ["mcp"] }, jo.bearer),
    );
    const bearer = { authorization: `Bearer ${created.body.token}` };
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const opened = await fetch(`${a.url}/mcp`, {
      method: "POST",
      headers: { ...headers, ...bearer },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      }),
    });
    await opened.text();
    const session = opened.headers.get("mcp-session-id") as string;
    expect(typeof session).toBe("string");
    const ping = await fetch(`${b.url}/mcp`, {
      method: "POST",
      headers: { ...headers, ...bearer, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
    });
    expect(ping.status).toBe(200);
    expect(await ping.text()).toContain('"result"');
  });
});

describe("take-over", () => {
  test("when the home instance stops, the other takes the home once its lease lapses and serves the chat", async () => {
    const [a, b] = await twoInstances();
    const cai = await signUp(a.t, "cai@example.org");
    const onA = scripted(a.t, [fauxAssistantMessage("from A")]);
    const first = await lines(await chatOn(a, cai, { message: "hi", model: onA.id }));
    expect(first.at(-1)?.type).toBe("done");
    // A run A left marked running (A dies in the middle of one).
    await a.t.ctx.database.run(
      `INSERT INTO chat_runs (id, owner_id, session_id, prompt, mode, model, status, settings_json, started_at)
       VALUES ('run_left', ?, ?, 'p', 'chat', 'm', 'running', '{}', ?)`,
      [cai.id, first[0]?.sessionId, new Date().toISOString()],
    );
    // A "crashes": no heartbeat, no answer.
    a.t.ctx.leases.stop();
    await a.unlisten();

    const onB = scripted(b.t, [fauxAssistantMessage("from B")]);
    const second = await lines(
      await chatOn(b, cai, { sessionId: first[0]?.sessionId, message: "again", model: onB.id }),
    );
    expect(second.at(-1)).toMatchObject({ type: "done" });
    expect(onB.calls()).toBe(1);
    expect(await holder(b, cai.id)).toBe(b.t.ctx.instanceId);
    const left = await b.t.json<Event>("/api/chat/provenance?runId=run_left", { headers: cai.bearer });
    expect(left.body).toMatchObject({ status: "failed" });

    // A comes back to life: its next heartbeat finds the home gone and it stops writing there.
    expect(a.t.family("chat").home.homes.holds(cai.id)).toBe(true);
    await a.t.ctx.leases.renew();
    await waitFor(() => !a.t.family("chat").home.homes.holds(cai.id), { what: "A to let the home go" });
    expect(a.t.family("chat").runtime.host.ownerSessions(cai.id)).toEqual([]);
  });

  test("no double writer: while the home's lease is renewed, an unreachable home is never taken over", async () => {
    const [a, b] = await twoInstances();
    const dee = await signUp(a.t, "dee@example.org");
    expect((await a.t.request("/api/chat/sessions", { headers: dee.bearer })).status).toBe(200);
    // A stops answering but keeps renewing (a network split, a stalled listener).
    await a.unlisten();
    const model = scripted(b.t, [fauxAssistantMessage("must not run")]);
    const refused = await chatOn(b, dee, { message: "hi", model: model.id });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as Event).message).toContain("try again");
    expect(model.calls()).toBe(0);
    expect(await holder(b, dee.id)).toBe(a.t.ctx.instanceId);
  });
});

describe("attacks", () => {
  test("another user's routing value or a forged forward marker gets a caller nothing of theirs", async () => {
    const [a, b] = await twoInstances();
    const eve = await signUp(a.t, "eve@example.org");
    const fay = await signUp(a.t, "fay@example.org");
    // Fay's home is B, with one session there; Eve's home is A.
    const model = scripted(b.t, [fauxAssistantMessage("fay's secret")]);
    expect((await lines(await chatOn(b, fay, { message: "mine", model: model.id }))).at(-1)?.type).toBe(
      "done",
    );
    expect((await a.t.request("/api/chat/sessions", { headers: eve.bearer })).status).toBe(200);
    expect(await holder(a, fay.id)).toBe(b.t.ctx.instanceId);

    const sessionsOf = async (n: Node, headers: Record<string, string>) => {
      const response = await fetch(`${n.url}/api/chat/sessions`, { headers: { ...eve.bearer, ...headers } });
      return { status: response.status, body: (await response.json()) as Event };
    };
    // Fay's routing value (cookie or header) on B: Eve is still Eve, her own (empty) list.
    const fayValue = homeValue(SECRET, fay.id);
    const spoofs: Record<string, string>[] = [
      { cookie: `atrium_home=${fayValue}` },
      { "x-atrium-home": fayValue },
    ];
    for (const headers of spoofs) {
      const listed = await sessionsOf(b, headers);
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.body)).not.toContain("fay's secret");
      expect(listed.body.sessions).toEqual([]);
    }
    // A forged "already forwarded" marker on B does not make B serve Eve's home itself.
    const forged = await sessionsOf(b, { "x-atrium-forwarded-by": a.t.ctx.instanceId });
    expect(forged.status).toBe(503);
    expect(b.t.family("chat").home.homes.holds(eve.id)).toBe(false);
  });

  test("a forward goes to the registered address only, carrying the caller's request and no secret", async () => {
    const [a, b] = await twoInstances();
    const gus = await signUp(a.t, "gus@example.org");
    // Gus's home: an instance whose registered address is a recorder on loopback.
    const seen: { url: string; headers: Record<string, string>; body: string }[] = [];
    const recorder = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        const headers: Record<string, string> = {};
        request.headers.forEach((value, name) => {
          headers[name] = value;
        });
        seen.push({
          url: request.url,
          headers,
          body: await request.text(),
        });
        return new Response('{"from":"home"}', { headers: { "content-type": "application/json" } });
      },
    });
    cleanups.push(async () => void recorder.stop(true));
    const now = Date.now();
    await a.t.ctx.database.run("INSERT INTO instances (id, url, started_at) VALUES (?, ?, ?)", [
      "inst_recorder",
      `http://127.0.0.1:${recorder.port}`,
      now,
    ]);
    await a.t.ctx.database.run(
      "INSERT INTO leases (kind, id, holder, heartbeat_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      [HOME_LEASE, gus.id, "inst_recorder", now, now + 60_000],
    );
    const response = await fetch(`${b.url}/api/chat/sessions?limit=5`, {
      headers: { ...gus.bearer, connection: "keep-alive, x-drop-me", "x-drop-me": "1", "x-kept": "yes" },
    });
    expect(await response.json()).toEqual({ from: "home" });
    expect(seen).toHaveLength(1);
    const [forwarded] = seen as [(typeof seen)[number]];
    expect(forwarded.url).toBe(`http://127.0.0.1:${recorder.port}/api/chat/sessions?limit=5`);
    expect(forwarded.headers.authorization).toBe(gus.bearer.authorization);
    expect(forwarded.headers["x-kept"]).toBe("yes");
    expect(forwarded.headers["x-drop-me"]).toBeUndefined();
    expect(forwarded.headers["x-atrium-forwarded-by"]).toBe(b.t.ctx.instanceId);
    expect(JSON.stringify(forwarded)).not.toContain(SECRET);
    // A path that would name another host (`//host/...`) is not forwarded anywhere but the origin.
    const other = await freePort();
    const steered = new Request(`http://localhost//127.0.0.1:${recorder.port}/api/chat/sessions`);
    expect(await forwardHome(steered, `http://127.0.0.1:${other}`, "inst_b")).toBeUndefined();
    expect(seen).toHaveLength(1);
  });

  test("the home cookie is set per user, the same on every instance", async () => {
    const [a, b] = await twoInstances();
    const hal = await signUp(a.t, "hal@example.org");
    const cookieOn = async (n: Node) =>
      (await fetch(`${n.url}/api/chat/sessions`, { headers: hal.bearer })).headers.get("set-cookie");
    const value = homeValue(SECRET, hal.id);
    expect(await cookieOn(a)).toContain(`atrium_home=${value}`);
    expect(await cookieOn(b)).toContain(`atrium_home=${value}`);
    expect(value).not.toBe(homeValue(SECRET, "someone-else"));
    expect(value).not.toContain(hal.id);
  });
});
