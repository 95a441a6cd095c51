/**
 * One long-lived sandbox per user (protected mode, the real jail, a real listening server): a server a
 * command starts in the background keeps running for later commands and answers through the signed
 * preview URL, over HTTP and WebSocket; previews of other users, forged or expired URLs are refused;
 * stopping (webhook, `atrium user delete`) ends the jail's processes and the next command starts a fresh
 * one; two users' sandboxes share no process, file or port; inside, commands run as uid 65534 (on the
 * host, when the server is root, a real unprivileged uid of the user's own) in /home/atrium/agent-workspace.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHmac } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LocalSandboxProvider } from "../../server/sandbox/users/provider.ts";
import { userCommandMain as userCommand } from "../../server/user-command.ts";
import { ownerFolders } from "../../server/workspace/owner-folders.ts";
import { authApp, databaseEnvOf, PASSWORD, type SignedUser, signUp } from "../auth/auth-app.ts";
import type { TestApp } from "../helpers/app.ts";
import { descendants, runIn } from "../helpers/jail.ts";
import { listen } from "../helpers/listen.ts";
import { processGone, waitFor } from "../helpers/wait.ts";

setDefaultTimeout(90_000);

const WEBHOOK_SECRET = "webhook-secret-for-sandbox-tests";
let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let sandboxes: LocalSandboxProvider;
let ann: SignedUser;
let bob: SignedUser;

beforeAll(async () => {
  t = await authApp({ env: { SANDBOX_WEBHOOK_SECRET: WEBHOOK_SECRET } });
  server = listen(t);
  sandboxes = t.family("chat").runtime.sandboxes as LocalSandboxProvider;
  ann = await signUp(t, "ann@example.org");
  bob = await signUp(t, "bob@example.org");
});
afterAll(async () => {
  await server.stop();
  await t.close();
});

const run = (owner: string, command: string, timeout?: number) => runIn(sandboxes, owner, command, timeout);

/** A Python one-liner fetching a URL inside the sandbox (prints the body or the error's class). */
const fetchInside = (url: string) =>
  `python3 -c "import urllib.request as u
try: print(u.urlopen('${url}', timeout=5).read().decode())
except Exception as e: print('refused', type(e).__name__)"`;

async function previewUrl(user: SignedUser, port: number): Promise<string> {
  const made = await fetch(`${server.url}/api/sandbox/preview?port=${port}`, { headers: user.bearer });
  expect(made.status).toBe(200);
  const { url } = (await made.json()) as { url: string };
  return `${server.url}${new URL(url).pathname}`;
}

/** Starts python's http.server on 127.0.0.1:port inside the owner's sandbox, serving their workspace. */
async function serveWorkspace(owner: string, port: number): Promise<void> {
  const started = await run(owner, `nohup python3 -m http.server ${port} --bind 127.0.0.1 >/dev/null 2>&1 &`);
  expect(started.exitCode).toBe(0);
  await waitFor(
    async () => !(await run(owner, fetchInside(`http://127.0.0.1:${port}/`))).out.startsWith("refused"),
    {
      what: `a server on port ${port} in the sandbox`,
      intervalMs: 100,
    },
  );
}

const webhook = (event: string, sandboxId: string) => {
  const raw = JSON.stringify({ event, sandboxId, timestamp: Date.now(), nonce: Math.random() });
  const signature = createHmac("sha256", WEBHOOK_SECRET).update(raw).digest("hex");
  return fetch(`${server.url}/api/webhooks/sandbox`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-sandbox-signature": signature },
    body: raw,
  });
};

describe("a user's long-lived sandbox", () => {
  test("commands run as uid 65534 in /home/atrium/agent-workspace, the owner's workspace folder", async () => {
    const { out, exitCode } = await run(ann.id, "id -u; pwd; echo $HOME; echo made > made.txt");
    expect(exitCode).toBe(0);
    expect(out.split("\n").slice(0, 3)).toEqual(["65534", "/home/atrium/agent-workspace", "/home/atrium"]);
    const made = join(ownerFolders(t.dataDir, ann.id).workspace, "made.txt");
    expect(readFileSync(made, "utf8")).toBe("made\n");
    // Started by root, the jail's processes are the user's own unprivileged uid on the host, not root.
    if (process.getuid?.() === 0)
      expect(statSync(made).uid).toBe((await sandboxes.hostUid(ann.id)) as number);
  });

  test("a background server outlives its command: a later command and the signed preview URL reach it", async () => {
    writeFileSync(join(ownerFolders(t.dataDir, ann.id).workspace, "index.html"), "<h1>hello from ann</h1>");
    await serveWorkspace(ann.id, 3000);
    expect((await run(ann.id, fetchInside("http://127.0.0.1:3000/index.html"))).out).toContain(
      "hello from ann",
    );

    const url = await previewUrl(ann, 3000);
    const page = await fetch(`${url}index.html?x=1`, { headers: ann.bearer });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("hello from ann");
    expect(page.headers.get("content-security-policy")).toStartWith("sandbox ");
    expect(page.headers.get("set-cookie")).toBeNull();
    // The signed URL is the credential (a previewed page's own requests carry no session cookie), but
    // a caller signed in as someone else is refused.
    expect((await fetch(url, { headers: bob.bearer })).status).toBe(403);
    expect((await fetch(url)).status).toBe(200);
  });

  test("the request's method, body and headers reach the server, the caller's credentials do not", async () => {
    const echo = `/opt/atrium/bun -e 'Bun.serve({ hostname: "127.0.0.1", port: 3002, async fetch(r) {
      return Response.json({ method: r.method, body: await r.text(), headers: Object.fromEntries(r.headers) }, { headers: { "set-cookie": "atrium_session=planted; Path=/", "clear-site-data": "\\"cookies\\"" } });
    } })' >/dev/null 2>&1 &`;
    await run(ann.id, echo);
    const url = await previewUrl(ann, 3002);
    const answer = await waitFor(
      async () => {
        const response = await fetch(`${url}submit`, {
          method: "PUT",
          headers: {
            ...ann.bearer,
            cookie: "atrium_session=secret-cookie",
            "x-custom": "kept",
            "content-type": "text/plain",
          },
          body: "payload",
        });
        return response.status === 200 ? response : undefined;
      },
      { what: "the echo server", intervalMs: 100 },
    );
    expect(answer.headers.get("set-cookie")).toBeNull();
    expect(answer.headers.get("clear-site-data")).toBeNull();
    const seen = (await answer.json()) as { method: string; body: string; headers: Record<string, string> };
    expect(seen.method).toBe("PUT");
    expect(seen.body).toBe("payload");
    expect(seen.headers["x-custom"]).toBe("kept");
    expect(seen.headers.host).toBe("localhost:3002");
    expect(JSON.stringify(seen.headers)).not.toContain(ann.token);
    expect(seen.headers.cookie).toBeUndefined();
    expect(seen.headers.authorization).toBeUndefined();
  });

  test("a WebSocket server in the sandbox is reached through the preview URL; another user's credentials are not", async () => {
    await run(
      ann.id,
      `/opt/atrium/bun -e 'Bun.serve({ hostname: "127.0.0.1", port: 3001, fetch(r, s) { if (s.upgrade(r, { data: new URL(r.url).pathname })) return; return new Response("not a socket") }, websocket: { message(ws, m) { ws.send(typeof m === "string" ? "echo:" + ws.data + ":" + m : m) } } })' >/dev/null 2>&1 &`,
    );
    const url = (await previewUrl(ann, 3001)).replace(/^http/, "ws");
    await waitFor(
      async () => (await run(ann.id, fetchInside("http://127.0.0.1:3001/"))).out.includes("not a socket"),
      {
        what: "the WebSocket server",
        intervalMs: 100,
      },
    );
    const socket = new WebSocket(`${url}chat`, { headers: ann.bearer } as unknown as string[]);
    socket.binaryType = "arraybuffer";
    const received: unknown[] = [];
    socket.onmessage = (event) => received.push(event.data);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    socket.send("hi");
    socket.send(new Uint8Array([1, 2, 3]));
    socket.send("x".repeat(70_000));
    await waitFor(() => received.length === 3, { what: "three echoes" });
    expect(received[0]).toBe("echo:/chat:hi");
    expect([...new Uint8Array(received[1] as ArrayBuffer)]).toEqual([1, 2, 3]);
    expect(received[2]).toBe(`echo:/chat:${"x".repeat(70_000)}`);
    socket.close();

    const borrowed = new WebSocket(`${url}chat`, { headers: bob.bearer } as unknown as string[]);
    const outcome = await new Promise<string>((resolve) => {
      borrowed.onopen = () => resolve("open");
      borrowed.onerror = () => resolve("refused");
      borrowed.onclose = () => resolve("refused");
    });
    expect(outcome).toBe("refused");
  });

  test("a port nothing listens on is 502 with a clear message", async () => {
    const response = await fetch(await previewUrl(ann, 4999), { headers: ann.bearer });
    expect(response.status).toBe(502);
    expect(await response.json()).toEqual({ error: "Nothing answers on port 4999 in your sandbox" });
  });

  test("two users' sandboxes share no process, file or port", async () => {
    await run(ann.id, "echo ann-only > /tmp/ann-marker");
    const seen = await run(
      bob.id,
      `ps -eo args | grep -c http.server; ls /home/atrium/agent-workspace; cat /tmp/ann-marker 2>&1; ${fetchInside("http://127.0.0.1:3000/index.html")}`,
    );
    expect(seen.out).not.toContain("python3 -m http.server");
    expect(seen.out).not.toContain("index.html");
    expect(seen.out).not.toContain("ann-only");
    expect(seen.out).toContain("refused");
    // Bob's preview of port 3000 reaches his own (empty) sandbox, not Ann's server.
    const response = await fetch(await previewUrl(bob, 3000), { headers: bob.bearer });
    expect(response.status).toBe(502);
  });
});

describe("stopping a sandbox", () => {
  test("a webhook stop event ends its processes; the preview is 404; the next command starts a fresh jail", async () => {
    await serveWorkspace(bob.id, 3000);
    await run(bob.id, "echo here > /tmp/bob-marker");
    const url = await previewUrl(bob, 3000);
    expect((await fetch(url, { headers: bob.bearer })).status).toBe(200);
    const record = await sandboxes.registry.of(bob.id);
    expect(record?.state).toBe("started");
    const jail = sandboxes.jailPid(bob.id) as number;
    const processes = [jail, ...descendants(jail)];
    const response = await webhook("sandbox.stopped", record?.sandboxId as string);
    expect(response.status).toBe(200);
    expect(await sandboxes.active(bob.id)).toBeUndefined();
    expect(processes.filter((pid) => !processGone(pid))).toEqual([]);
    expect((await fetch(url, { headers: bob.bearer })).status).toBe(404);
    const fresh = await run(bob.id, `cat /tmp/bob-marker 2>&1; ${fetchInside("http://127.0.0.1:3000/")}`);
    expect(fresh.out).toContain("No such file");
    expect(fresh.out).toContain("refused");
    expect((await sandboxes.registry.of(bob.id))?.state).toBe("started");
  });

  test("`atrium user delete` stops the deleted user's sandbox in the running server", async () => {
    const carol = await signUp(t, "carol@example.org");
    await serveWorkspace(carol.id, 3000);
    const jail = sandboxes.jailPid(carol.id) as number;
    const processes = [jail, ...descendants(jail)];
    // The outer jail, its init, the runner and the server at least.
    expect(processes.length).toBeGreaterThanOrEqual(4);
    const out: string[] = [];
    const code = await userCommand(
      ["delete", "carol@example.org", "--yes", "--data-dir", t.dataDir],
      { out: (s: string) => out.push(s), err: (s: string) => out.push(s) } as never,
      { ...process.env, ...databaseEnvOf(t) },
    );
    expect({ code, out: out.join("") }).toMatchObject({ code: 0 });
    await waitFor(() => processes.every(processGone), { what: "the sandbox's processes to end" });
    expect(await sandboxes.active(carol.id)).toBeUndefined();
    expect(await sandboxes.registry.of(carol.id)).toBeUndefined();
    expect(existsSync(ownerFolders(t.dataDir, carol.id).workspace)).toBe(false);
    // The password no longer signs in, and nothing of Carol's runs any more.
    const signIn = await fetch(`${server.url}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "carol@example.org", password: PASSWORD }),
    });
    expect(signIn.status).not.toBe(200);
    mkdirSync(ownerFolders(t.dataDir, carol.id).workspace, { recursive: true });
  });
});
