// biome-ignore-all lint/suspicious/noExplicitAny: response bodies in tests are read loosely; the assertions check them.
/**
 * Several instances behind the real load balancer (issue 28, item 5): PostgreSQL, two Atrium server
 * processes on one database and one data dir, and HAProxy with the shipped deploy/haproxy.cfg
 * (helpers/balancer.ts). Through the balancer: both instances answer, a home value pins a client to one
 * instance, the sign-in limit counts across them, a CSRF token one issues the other accepts (and both
 * follow a preview URL signed under the shared secret), and a turn runs.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { PreviewSigner } from "../../server/sandbox/users/preview.ts";
import { chat } from "../helpers/agents.ts";
import { CLUSTER_SECRET, type Cluster, homeValueFor, instanceOf, startCluster } from "../helpers/balancer.ts";
import { readFrames } from "../helpers/streams.ts";

setDefaultTimeout(120_000);

const PASSWORD = "correct horse battery";
const LEASE_MS = 2000;
let cluster: Cluster;
beforeAll(async () => {
  // A short lease: a killed instance's turn fails for its followers within seconds (issue 28, item 1).
  cluster = await startCluster({ env: { APP_LEASE_MS: String(LEASE_MS) } });
}, 180_000);
afterAll(() => cluster?.stop());

/** A request through the balancer; the body read, and which instance answered. */
async function call(path: string, init: RequestInit & { json?: unknown } = {}) {
  const headers = new Headers(init.headers);
  if (init.json !== undefined) headers.set("content-type", "application/json");
  const response = await fetch(`${cluster.url}${path}`, {
    ...init,
    headers,
    body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
  });
  const text = await response.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, body, instance: instanceOf(response), headers: response.headers };
}

async function signUp(email: string): Promise<{ token: string; bearer: Record<string, string> }> {
  const up = await call("/api/auth/sign-up/email", { method: "POST", json: { email, password: PASSWORD } });
  expect(up.status).toBe(200);
  return { token: up.body.token, bearer: { authorization: `Bearer ${up.body.token}` } };
}

describe("routing", () => {
  test("both instances answer /api/health", async () => {
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await call("/api/health");
      expect(r.status).toBe(200);
      expect(r.body.status).toBe("ok");
      seen.push(r.instance as string);
    }
    expect(new Set(seen)).toEqual(new Set(["a", "b"]));
  });

  test("a home header or cookie pins a client to one instance", async () => {
    for (const name of ["a", "b"] as const) {
      const home = await homeValueFor(cluster, name);
      for (let i = 0; i < 4; i++) {
        expect((await call("/api/health", { headers: { "x-atrium-home": home } })).instance).toBe(name);
        expect((await call("/api/health", { headers: { cookie: `atrium_home=${home}` } })).instance).toBe(
          name,
        );
      }
    }
  });

  test("the agents WebSocket upgrades through it, on either instance", async () => {
    const eve = await signUp("socket@example.org");
    const agent = await call("/v1/agents", {
      method: "POST",
      json: { name: "helper", role: "helps" },
      headers: eve.bearer,
    });
    expect(agent.status).toBe(200);
    for (const name of ["a", "b"] as const) {
      const home = await homeValueFor(cluster, name);
      const ws = await chat(
        cluster.url,
        { target_id: agent.body.id, target_type: "agent", auth_token: eve.token },
        { "x-atrium-home": home },
      );
      const connected = await ws.next((f) => f.type === "connected");
      expect(typeof connected.session_id).toBe("string");
      ws.close();
    }
  });

  test("/api/settings is refused at the balancer", async () => {
    const r = await call("/api/settings");
    expect(r.status).toBe(403);
    expect(r.instance).toBeNull();
  });
});

describe("shared limits and keys", () => {
  test("sign-in failures spread over both instances lock the account at the 5th, on every instance", async () => {
    await signUp("limits@example.org");
    const answered: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call("/api/auth/sign-in/email", {
        method: "POST",
        json: { email: "limits@example.org", password: `wrong-${i}-xx` },
      });
      expect(r.status).toBe(401);
      answered.push(r.instance as string);
    }
    expect(new Set(answered)).toEqual(new Set(["a", "b"]));
    for (const name of ["a", "b"] as const) {
      const home = await homeValueFor(cluster, name);
      const locked = await call("/api/auth/sign-in/email", {
        method: "POST",
        headers: { "x-atrium-home": home },
        json: { email: "limits@example.org", password: PASSWORD },
      });
      expect({ instance: locked.instance, status: locked.status }).toEqual({ instance: name, status: 429 });
    }
    // And a third instance started on the same database afterwards, asked directly.
    const c = await cluster.third();
    const third = await fetch(`${c.url}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "limits@example.org", password: PASSWORD }),
    });
    expect(third.status).toBe(429);
    await c.stop();
  });

  test("a CSRF token instance A issues passes instance B's check", async () => {
    const ann = await signUp("csrf@example.org");
    const session = { cookie: `atrium_session=${ann.token}` };
    const onA = { "x-atrium-home": await homeValueFor(cluster, "a") };
    const onB = { "x-atrium-home": await homeValueFor(cluster, "b") };
    const issued = await call("/api/workspace/reindex", { headers: { ...session, ...onA } });
    expect(issued.instance).toBe("a");
    const token = issued.body.csrfToken as string;
    const post = (csrf: string) =>
      call("/api/workspace/reindex", {
        method: "POST",
        json: {},
        headers: {
          ...onB,
          origin: cluster.url,
          cookie: `${session.cookie}; app_csrf=${csrf}`,
          "x-app-csrf-token": csrf,
        },
      });
    const accepted = await post(token);
    expect({ instance: accepted.instance, status: accepted.status }).toEqual({ instance: "b", status: 200 });
    expect((await post(`${token.slice(0, -2)}xx`)).status).toBe(403);
  });

  test("both instances follow a preview URL signed under APP_AUTH_SECRET, and refuse another key's", async () => {
    const bob = await signUp("preview@example.org");
    const me = await call("/api/auth/get-session", { headers: bob.bearer });
    const owner = (me.body.user?.id ?? me.body.id) as string;
    expect(typeof owner).toBe("string");
    const { token } = new PreviewSigner(CLUSTER_SECRET).sign(owner, 3000);
    const { token: foreign } = new PreviewSigner("another-secret-0123456789abcdef").sign(owner, 3000);
    for (const name of ["a", "b"] as const) {
      const headers = { ...bob.bearer, "x-atrium-home": await homeValueFor(cluster, name) };
      // Past the signature: bob has no running sandbox (404), where a bad signature is 403.
      const followed = await call(`/api/sandbox/preview/${token}/`, { headers });
      expect({ instance: followed.instance, status: followed.status }).toEqual({
        instance: name,
        status: 404,
      });
      expect((await call(`/api/sandbox/preview/${foreign}/`, { headers })).status).toBe(403);
    }
  });
});

/** Starts a turn of `code` through the balancer; the response. */
async function startTurn(bearer: Record<string, string>, code: string, headers: Record<string, string> = {}) {
  const created = await call("/api/sessions", {
    method: "POST",
    json: { title: "via the balancer" },
    headers: bearer,
  });
  expect(created.status).toBe(200);
  const response = await fetch(`${cluster.url}/api/sessions/${created.body.id}/turns`, {
    method: "POST",
    headers: {
      ...bearer,
      ...headers,
      "content-type": "application/json",
      "idempotency-key": crypto.randomUUID(),
    },
    body: JSON.stringify({ text: `\`\`\`python\n${code}\n\`\`\`` }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  return { response, session: created.body.id as string };
}

const specEvents = (frames: { event?: string; data: string }[]) =>
  frames.filter((f) => f.data !== "[DONE]").map((f) => JSON.parse(f.data));
const terminal = (events: any[]) =>
  events.filter((e) => ["turn_finish", "turn_error", "turn_cancelled"].includes(e.type)).map((e) => e.type);

describe("turns", () => {
  test("a plain turn runs through the balancer to its one terminal event", async () => {
    const carol = await signUp("turns@example.org");
    const { response } = await startTurn(carol.bearer, 'print("bal" + "ancer")');
    const events = specEvents(await readFrames(response));
    expect(events.some((e) => e.type === "output" && String(e.output).includes("balancer"))).toBe(true);
    expect(terminal(events)).toEqual(["turn_finish"]);
  });

  test("a turn's stream is not buffered: its first output arrives while it still runs", async () => {
    const dan = await signUp("stream@example.org");
    // Pinned to one instance: following and cancelling from another is the leases' work (issue 28, 1-2).
    const onA = { "x-atrium-home": await homeValueFor(cluster, "a") };
    const { response } = await startTurn(
      dan.bearer,
      'print("started", flush=True)\nimport time\ntime.sleep(120)',
      onA,
    );
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = "";
    while (!seen.includes("started")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended early: ${seen}`);
      seen += new TextDecoder().decode(value);
    }
    const runId = seen.match(/"runId":"(run_[0-9a-f]+)"/)?.[1] as string;
    const cancel = await call(`/api/runs/${runId}/cancellation`, {
      method: "PUT",
      headers: { ...dan.bearer, ...onA },
    });
    // Still running when its first output came through (a buffered stream would hold it for 120 s).
    expect({ status: cancel.status, body: cancel.body }).toEqual({
      status: 202,
      body: { runId, status: "cancelling" },
    });
    for (let r = await reader.read(); !r.done; r = await reader.read())
      seen += new TextDecoder().decode(r.value);
    const rest = specEvents(await readFrames(new Response(seen)));
    expect(terminal(rest)).toEqual(["turn_cancelled"]);
  });
});

const LOOP = "import time\nn = 0\nwhile True:\n    n += 1\n    time.sleep(0.05)";

/** A turn of LOOP on `home`'s instance (or a retry of it with the same key): its stream, read as it comes. */
async function loopTurn(bearer: Record<string, string>, home: string, session: string, key: string) {
  const response = await fetch(`${cluster.url}/api/sessions/${session}/turns`, {
    method: "POST",
    headers: { ...bearer, "x-atrium-home": home, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ text: `\`\`\`python\n${LOOP}\n\`\`\`` }),
  });
  expect(instanceOf(response)).toBe(home === (await homeValueFor(cluster, "a")) ? "a" : "b");
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let text = "";
  return {
    /** Reads until the text so far includes `marker`. */
    async until(marker: string) {
      while (!text.includes(marker)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${marker}: ${text}`);
        text += new TextDecoder().decode(value);
      }
      return text;
    },
    async rest() {
      for (let r = await reader.read(); !r.done; r = await reader.read())
        text += new TextDecoder().decode(r.value);
      // The contract's events (frames with an `event:` line; the compat frames between them are left out).
      const frames = await readFrames(new Response(text));
      return frames.filter((f) => f.event).map((f) => JSON.parse(f.data));
    },
  };
}

async function newSession(bearer: Record<string, string>) {
  const created = await call("/api/sessions", {
    method: "POST",
    json: { title: "instances" },
    headers: bearer,
  });
  expect(created.status).toBe(200);
  return created.body.id as string;
}

const contract = (events: any[]) => events.filter((e) => e.type !== "turn_status");

describe("turns among the instances", () => {
  test("a turn started through A is followed to its end through B; a cancel through B stops it", async () => {
    const erin = await signUp("follow@example.org");
    const [onA, onB] = [await homeValueFor(cluster, "a"), await homeValueFor(cluster, "b")];
    const session = await newSession(erin.bearer);
    const key = crypto.randomUUID();
    const first = await loopTurn(erin.bearer, onA, session, key);
    const runId = (await first.until("event: code")).match(/"runId":"(run_[0-9a-f]+)"/)?.[1] as string;
    const follower = await loopTurn(erin.bearer, onB, session, key);
    await follower.until("event: code");
    const cancel = await call(`/api/runs/${runId}/cancellation`, {
      method: "PUT",
      headers: { ...erin.bearer, "x-atrium-home": onB },
    });
    expect({ status: cancel.status, instance: cancel.instance }).toEqual({ status: 202, instance: "b" });
    const [onAEvents, onBEvents] = [await first.rest(), await follower.rest()];
    expect(terminal(onAEvents)).toEqual(["turn_cancelled"]);
    expect(terminal(onBEvents)).toEqual(["turn_cancelled"]);
    expect(contract(onBEvents)).toEqual(contract(onAEvents));
  });

  test("starting a third instance leaves A's running turn alone", async () => {
    const fay = await signUp("third@example.org");
    const onA = await homeValueFor(cluster, "a");
    const turn = await loopTurn(fay.bearer, onA, await newSession(fay.bearer), crypto.randomUUID());
    const runId = (await turn.until("event: code")).match(/"runId":"(run_[0-9a-f]+)"/)?.[1] as string;
    const c = await cluster.third();
    try {
      // Past a lease time after C's start-up: A's heartbeat keeps the run its own.
      await Bun.sleep(LEASE_MS * 1.5);
      const cancel = await call(`/api/runs/${runId}/cancellation`, {
        method: "PUT",
        headers: { ...fay.bearer, "x-atrium-home": onA },
      });
      expect(cancel.status).toBe(202);
      expect(terminal(await turn.rest())).toEqual(["turn_cancelled"]);
    } finally {
      await c.stop();
    }
  });

  test("the agents WebSocket history of a session opened on A is served by B", async () => {
    const gus = await signUp("history@example.org");
    const agent = await call("/v1/agents", {
      method: "POST",
      json: { name: "keeper", role: "keeps" },
      headers: gus.bearer,
    });
    expect(agent.status).toBe(200);
    const [onA, onB] = [await homeValueFor(cluster, "a"), await homeValueFor(cluster, "b")];
    const first = await chat(
      cluster.url,
      { target_id: agent.body.id, target_type: "agent", auth_token: gus.token },
      { "x-atrium-home": onA },
    );
    const { session_id } = await first.next((f) => f.type === "connected");
    first.send({ type: "message", content: "remember the balancer" });
    await first.next((f) => f.type !== "connected");
    first.close();
    await first.closed;
    const history = await call(`/v1/chat/sessions/${session_id}/history`, {
      headers: { ...gus.bearer, "x-atrium-home": onB },
    });
    expect(history.instance).toBe("b");
    expect(history.body.messages[0]).toMatchObject({ type: "user", content: "remember the balancer" });
    const again = await chat(cluster.url, { session_id, auth_token: gus.token }, { "x-atrium-home": onB });
    expect(await again.next((f) => f.type === "connected")).toMatchObject({ session_id });
    again.close();
  });

  test("kill -9 of A fails its live turn for a follower on B within the lease time; B serves the rest", async () => {
    const hal = await signUp("crash@example.org");
    const [onA, onB] = [await homeValueFor(cluster, "a"), await homeValueFor(cluster, "b")];
    const session = await newSession(hal.bearer);
    const key = crypto.randomUUID();
    const first = await loopTurn(hal.bearer, onA, session, key);
    await first.until("event: code");
    const follower = await loopTurn(hal.bearer, onB, session, key);
    await follower.until("event: code");
    await cluster.instances.a.stop("SIGKILL");
    try {
      const events = await follower.rest();
      expect(terminal(events)).toEqual(["turn_error"]);
      expect(events.at(-1)).toMatchObject({ type: "turn_error", code: "interrupted" });
      // Everything else is B's now: health, and a new turn in the same session.
      for (let i = 0; i < 4; i++) expect((await call("/api/health")).instance).toBe("b");
      const { response } = await startTurn(hal.bearer, 'print("after")');
      expect(terminal(specEvents(await readFrames(response)))).toEqual(["turn_finish"]);
    } finally {
      await cluster.instances.a.start();
    }
  });
});
