/**
 * A disabled or deleted account's open connections end: the `/v1/chat` WebSocket, an `/api/attach` SSE
 * stream, a chat NDJSON stream and a running Python turn's SSE stream, all opened with the session token on a real listening server, close
 * when `atrium user disable|delete` runs as another process on the same data dir (the server learns it
 * from the database within its re-check interval), and the account's sessions are refused from then on.
 * Another user's connections stay open and keep working. A sign-out in this process ends its
 * session's streams at once. A disabled account's sandbox is stopped (its background processes end, its
 * preview URL leads nowhere), and starts again once the account is enabled.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import type { LocalSandboxProvider } from "../../server/sandbox/users/provider.ts";
import { type ChatClient, chat as socketChat } from "../helpers/agents.ts";
import { postJson, REPO_ROOT, type TestApp } from "../helpers/app.ts";
import { scripted } from "../helpers/chat.ts";
import { descendants, runIn } from "../helpers/jail.ts";
import { listen } from "../helpers/listen.ts";
import { turnRequest, turnsApp } from "../helpers/turns.ts";
import { processGone, waitFor } from "../helpers/wait.ts";
import { authApp, databaseEnvOf, PASSWORD, SECRET, type SignedUser, signUp } from "./auth-app.ts";

setDefaultTimeout(60_000);

let t: TestApp | undefined;
let server: { url: string; stop(): Promise<void> } | undefined;
const sockets: ChatClient[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  await server?.stop();
  await t?.close();
  t = server = undefined;
});

/** Reads a streamed body to its end in the background: what came, and whether it ended. */
function drain(response: Response) {
  const state = { text: "", ended: false };
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for (;;) {
        const { value, done } = (await reader?.read()) ?? { done: true, value: undefined };
        if (done) break;
        state.text += decoder.decode(value, { stream: true });
      }
    } catch {
      // a reset connection is an end too
    }
    state.ended = true;
  })();
  return state;
}

/** A user's three kinds of long-lived connection, opened with their session token. */
async function openEverything(url: string, app: TestApp, user: SignedUser, slowModel: string) {
  const agent = (await (
    await fetch(`${url}/v1/agents`, postJson({ name: "Helper", role: "helps" }, user.bearer))
  ).json()) as { id: string };
  expect(agent.id).toBeString();
  const socket = await socketChat(url, { target_id: agent.id, target_type: "agent", auth_token: user.token });
  sockets.push(socket);
  await socket.next((f) => f.type === "connected");

  const created = (await (
    await fetch(`${url}/api/chat/new`, { method: "POST", headers: user.bearer })
  ).json()) as {
    sessionId: string;
  };
  const attach = await fetch(`${url}/api/attach`, postJson({ sessionId: created.sessionId }, user.bearer));
  expect(attach.status).toBe(200);
  const sse = drain(attach);
  await waitFor(() => sse.text.includes("attached"), { what: "the attached frame" });

  const turn = await fetch(
    `${url}/api/chat`,
    postJson({ message: "talk slowly", model: slowModel }, user.bearer),
  );
  expect(turn.status).toBe(200);
  const ndjson = drain(turn);
  await waitFor(() => ndjson.text.includes('"type":"delta"'), { what: "the turn's first delta" });
  expect(app.ctx.connections.size).toBeGreaterThanOrEqual(2);
  return { socket, sse, ndjson };
}

async function cli(app: TestApp, ...args: string[]) {
  const proc = Bun.spawn(
    ["./node_modules/.bin/bun", "server/main.ts", "user", ...args, "--data-dir", app.dataDir],
    {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: process.env.HOME ?? "/root",
        ...databaseEnvOf(app),
      },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const code = await proc.exited;
  expect({ code, err: await new Response(proc.stderr).text() }).toEqual({ code: 0, err: "" });
}

const slowly = () => fauxAssistantMessage("word ".repeat(2000));

for (const action of ["disable", "delete"] as const) {
  test(`atrium user ${action} in another process closes the account's socket and streams; others go on`, async () => {
    t = await authApp();
    server = listen(t);
    const url = server.url;
    const ann = await signUp(t, "ann@example.org");
    const bob = await signUp(t, "bob@example.org");
    const model = scripted(t, [slowly(), slowly()], { tokensPerSecond: 20 });
    const annOpen = await openEverything(url, t, ann, model.id);
    const bobOpen = await openEverything(url, t, bob, model.id);

    await cli(t, action, "ann@example.org", ...(action === "delete" ? ["--yes"] : []));

    expect(await annOpen.socket.closed).toEqual({ code: 4401, reason: "Authentication revoked" });
    expect(annOpen.socket.frames.at(-1)).toMatchObject({ type: "error", code: "unauthorized" });
    await waitFor(() => annOpen.sse.ended, { what: "ann's attach stream to end" });
    await waitFor(() => annOpen.ndjson.ended, { what: "ann's chat stream to end" });
    // Ended by the server mid-turn: the reply never finished.
    expect(annOpen.ndjson.text).not.toContain('"type":"done"');
    // Her session is refused everywhere from now on.
    expect((await fetch(`${url}/api/chat/sessions`, { headers: ann.bearer })).status).toBe(401);
    expect(await (await fetch(`${url}/api/auth/get-session`, { headers: ann.bearer })).json()).toBeNull();

    // Bob's connections are untouched: his socket still answers, his streams are still open.
    const reply = await bobOpen.socket.ask("still there?");
    expect(reply.at(-1)).toMatchObject({ type: "stream", is_complete: true });
    expect(bobOpen.sse.ended).toBe(false);
    expect(bobOpen.ndjson.ended).toBe(false);
    model.dispose();
  });
}

test("signing out in this process ends that session's streams at once, not the user's other sessions", async () => {
  t = await authApp();
  server = listen(t);
  const ann = await signUp(t, "ann@example.org");
  const other = (
    await t.json<{ token: string }>(
      "/api/auth/sign-in/email",
      postJson({ email: "ann@example.org", password: "correct horse battery" }),
    )
  ).body.token;
  const open = async (token: string) => {
    const created = await t?.json<{ sessionId: string }>("/api/chat/new", {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    const response = await fetch(
      `${server?.url}/api/attach`,
      postJson({ sessionId: created?.body.sessionId }, { authorization: `Bearer ${token}` }),
    );
    const state = drain(response);
    await waitFor(() => state.text.includes("attached"));
    return state;
  };
  const first = await open(ann.token);
  const second = await open(other);
  const out = await fetch(`${server.url}/api/auth/sign-out`, { method: "POST", headers: ann.bearer });
  expect(out.status).toBe(200);
  await waitFor(() => first.ended, { what: "the signed-out session's stream to end" });
  expect(second.ended).toBe(false);
});

test("a disabled account's running turn stream (turns' SSE) ends too", async () => {
  t = await turnsApp({
    env: { APP_CHAT_RUNTIME_REQUIRE_AUTH: "1", APP_AUTH_SECRET: SECRET, APP_AUTH_SIGNUP: "open" },
  });
  server = listen(t);
  const ann = await signUp(t, "ann@example.org");
  const pool = t.family("turns").runtime.sandbox.pool;
  await waitFor(() => (pool?.readyCount ?? 0) >= 1, { timeoutMs: 60_000, what: "a warm interpreter" });
  const created = await fetch(`${server.url}/api/sessions`, postJson({ title: "loop" }, ann.bearer));
  const { id } = (await created.json()) as { id: string };
  const init = turnRequest({ text: "```python\nn = 0\nwhile True:\n    n += 1\n```" });
  const response = await fetch(`${server.url}/api/sessions/${id}/turns`, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), ...ann.bearer },
  });
  expect(response.status).toBe(200);
  const stream = drain(response);
  await waitFor(() => stream.text.includes("event: code"), { timeoutMs: 60_000, what: "the turn's code" });
  await cli(t, "disable", "ann@example.org");
  await waitFor(() => stream.ended, { what: "the turn stream to end" });
  expect(stream.text).not.toContain("event: turn_finish");

  // The turn itself is durable and still looping: enabled and signed in again, ann cancels it and
  // follows it (the same Idempotency-Key) to its end, so nothing of it outlives this app.
  await cli(t, "enable", "ann@example.org");
  const again = await t.json<{ token: string }>(
    "/api/auth/sign-in/email",
    postJson({ email: "ann@example.org", password: PASSWORD }),
  );
  const bearer = { authorization: `Bearer ${again.body.token}` };
  const runId = stream.text.match(/"runId":"(run_[0-9a-f]+)"/)?.[1];
  const cancel = await fetch(`${server.url}/api/runs/${runId}/cancellation`, {
    method: "PUT",
    headers: bearer,
  });
  expect(cancel.status).toBe(202);
  const follow = await fetch(`${server.url}/api/sessions/${id}/turns`, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), ...bearer },
  });
  expect(await follow.text()).toContain("event: turn_cancelled");
}, 180_000);

test("a disabled account's sandbox stops: what it left running ends, its preview URL leads nowhere; enabled again, it starts anew", async () => {
  t = await authApp();
  const ann = await signUp(t, "ann@example.org");
  const bob = await signUp(t, "bob@example.org");
  const sandboxes = t.family("chat").runtime.sandboxes as LocalSandboxProvider;
  // Each leaves a process running in the background, as a user's server or a loop would.
  for (const user of [ann, bob]) await runIn(sandboxes, user.id, "sleep 1000 >/dev/null 2>&1 &");
  const annJail = sandboxes.jailPid(ann.id) as number;
  const annTree = [annJail, ...descendants(annJail)];
  expect(annTree.length).toBeGreaterThan(1);
  const preview = await t.json<{ url: string }>("/api/sandbox/preview?port=3000", { headers: ann.bearer });
  expect(preview.status).toBe(200);
  const path = new URL(preview.body.url).pathname;

  await cli(t, "disable", "ann@example.org");

  await waitFor(() => annTree.every(processGone), { what: "the disabled account's sandbox to stop" });
  expect(sandboxes.jailPid(ann.id)).toBeUndefined();
  // The signed URL (still within its 10 minutes) reaches no sandbox.
  expect((await t.request(path)).status).toBe(404);
  // Bob's sandbox runs on.
  expect(sandboxes.jailPid(bob.id)).toBeNumber();
  expect((await runIn(sandboxes, bob.id, "echo here")).out).toBe("here\n");

  await cli(t, "enable", "ann@example.org");
  expect((await runIn(sandboxes, ann.id, "echo back")).out).toBe("back\n");
});
