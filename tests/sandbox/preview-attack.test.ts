/**
 * Attacking a user's sandbox and its previews (protected mode, the real jail, real Chromium):
 * - a previewed page is same-origin with the app, so it must not be able to use the app's API with the
 *   user's session cookie (read their sessions, create one);
 * - jailed code cannot replace the runner, reach the host's preview sockets, kill its way into a stuck
 *   sandbox (the host notices and the next command starts a fresh one) or flood the host with output;
 * - a `.pi` symlink planted in the workspace is not followed when the jail binds `.pi` read-only.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LocalSandboxProvider } from "../../server/sandbox/users/provider.ts";
import { ownerFolders } from "../../server/workspace/owner-folders.ts";
import { authApp, type SignedUser, signUp } from "../auth/auth-app.ts";
import type { TestApp } from "../helpers/app.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { runIn } from "../helpers/jail.ts";
import { listen } from "../helpers/listen.ts";
import { waitFor } from "../helpers/wait.ts";

setDefaultTimeout(90_000);

let t: TestApp;
let server: { url: string; stop(): Promise<void> };
let sandboxes: LocalSandboxProvider;
let ann: SignedUser;

beforeAll(async () => {
  t = await authApp();
  server = listen(t);
  sandboxes = t.family("chat").runtime.sandboxes as LocalSandboxProvider;
  ann = await signUp(t, "ann@example.org");
});
afterAll(async () => {
  await server.stop();
  await t.close();
});

const run = (owner: string, command: string, timeout?: number) => runIn(sandboxes, owner, command, timeout);

/** What a hostile previewed page tries: read the user's sessions, create one, with their cookie. */
const HOSTILE_SCRIPT = `
const out = [];
const note = (s) => { out.push(s); document.title = out.join(" | "); };
fetch("/api/chat/sessions", { credentials: "include" })
  .then((r) => r.text().then((t) => note("read " + r.status + " " + t.slice(0, 40))), (e) => note("read blocked"))
  .then(() => fetch("/api/chat/new", { method: "POST", credentials: "include", headers: { "content-type": "application/json" }, body: "{}" }))
  .then((r) => note("create " + r.status), () => note("create blocked"));
`;

describe("a previewed page", () => {
  test("cannot use the app's API with the user's session cookie", async () => {
    const workspace = ownerFolders(t.dataDir, ann.id).workspace;
    await run(ann.id, "true");
    writeFileSync(join(workspace, "index.html"), `<div id="ran"></div><script src="app.js"></script>`);
    writeFileSync(
      join(workspace, "app.js"),
      `document.getElementById("ran").textContent = "ran";${HOSTILE_SCRIPT}`,
    );
    await run(ann.id, "nohup python3 -m http.server 3000 --bind 127.0.0.1 >/dev/null 2>&1 &");
    const made = await t.json<{ url: string }>("/api/sandbox/preview?port=3000", { headers: ann.bearer });
    const url = `${server.url}${new URL(made.body.url).pathname}`;
    await waitFor(async () => (await fetch(url)).status === 200, {
      what: "the previewed server",
      intervalMs: 100,
    });
    const sessionsBefore = (await t.json<unknown[]>("/api/chat/sessions", { headers: ann.bearer })).body;

    const browser = await launchBrowser();
    try {
      const context = await browser.newContext();
      await context.addCookies([{ name: "atrium_session", value: ann.token, url: server.url }]);
      const page = await context.newPage();
      await page.goto(url);
      // The page and its script load (a preview works)...
      await waitFor(async () => (await page.textContent("#ran")) === "ran", { what: "the page's script" });
      const title = await waitFor(
        async () => {
          const text = await page.title();
          return text.includes("create") ? text : undefined;
        },
        { what: "the page's attempts" },
      );
      // ...but it neither reads the user's data nor changes it.
      expect(title).toBe("read blocked | create blocked");
    } finally {
      await browser.close();
    }
    const sessionsAfter = (await t.json<unknown[]>("/api/chat/sessions", { headers: ann.bearer })).body;
    expect(sessionsAfter).toEqual(sessionsBefore);
  });
});

describe("jailed code against its sandbox", () => {
  test("cannot replace the runner or the runtime, and sees none of the host's preview sockets", async () => {
    const { out } = await run(
      ann.id,
      "echo x > /opt/atrium/runner.ts 2>&1 || echo runner-ro; rm -f /opt/atrium/bun 2>&1 || echo bun-ro; ls /tmp /run; ls -la /proc/$PPID/root/ >/dev/null 2>&1 && echo root-listed",
    );
    expect(out).toContain("runner-ro");
    expect(out).toContain("bun-ro");
    expect(out).not.toContain(".sock");
    expect(out).not.toContain("atrium-previews");
  });

  test("killing the runner ends the sandbox; the host notices and the next command starts a fresh one", async () => {
    await run(ann.id, "echo old > /tmp/generation");
    const before = sandboxes.jailPid(ann.id);
    await expect(run(ann.id, "kill -9 $PPID; sleep 5")).rejects.toThrow("The sandbox stopped");
    await waitFor(async () => (await sandboxes.active(ann.id)) === undefined, { what: "the host to notice" });
    const { out } = await run(ann.id, "cat /tmp/generation 2>&1 || true; id -u");
    expect(out).toContain("No such file");
    expect(sandboxes.jailPid(ann.id)).not.toBe(before);
  });

  test("cannot take over the runner's channel to the host (its pipes, its descriptors)", async () => {
    // The runner's stdio are sockets (/proc/<pid>/fd cannot open them) and pidfd_getfd is denied by the
    // seccomp filter, so a command cannot speak the protocol to the host in the runner's name.
    const { out } = await run(
      ann.id,
      `runner=$(cat /proc/$$/status | sed -n 's/^PPid:\\s*//p'); echo forged > /proc/$runner/fd/1 2>/dev/null || echo fd-refused
python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
pidfd = os.pidfd_open($runner)
print('getfd', libc.syscall(438, pidfd, 1, 0), os.strerror(ctypes.get_errno()))
"`,
    );
    expect(out).toContain("fd-refused");
    expect(out).toContain("getfd -1 Operation not permitted");
    expect(out).not.toContain("forged");
  });

  test("a flood of output streams through without loss, and a timeout stops an endless one", async () => {
    let bytes = 0;
    const started = performance.now();
    const { exitCode } = await sandboxes.exec(ann.id, "head -c 20000000 /dev/zero", {
      onData: (data) => {
        bytes += data.length;
      },
    });
    expect({ exitCode, bytes }).toEqual({ exitCode: 0, bytes: 20_000_000 });
    expect(performance.now() - started).toBeLessThan(60_000);
    await expect(run(ann.id, "yes", 1)).rejects.toThrow("timeout:1");
    // The command's process group was killed (the jail's init reaps it a moment later), the sandbox lives on.
    await waitFor(
      async () => (await run(ann.id, "ps -eo comm | grep -c '^yes$' || true")).out.trim() === "0",
      {
        what: "the timed-out command's processes to end",
        intervalMs: 50,
      },
    );
  });

  test("a .pi symlink planted in the workspace is moved aside, not bound into the jail", async () => {
    await sandboxes.stop(ann.id);
    const workspace = ownerFolders(t.dataDir, ann.id).workspace;
    const pi = join(workspace, ".pi");
    await import("node:fs").then((fs) => fs.rmSync(pi, { recursive: true, force: true }));
    mkdirSync(join(t.dataDir, "secret-dir"), { recursive: true });
    writeFileSync(join(t.dataDir, "secret-dir", "secret.txt"), "host secret");
    symlinkSync(join(t.dataDir, "secret-dir"), pi);
    const { out } = await run(
      ann.id,
      "ls -A .pi; cat .pi/secret.txt 2>&1 || true; touch .pi/x 2>&1 || echo pi-ro",
    );
    expect(out).not.toContain("host secret");
    expect(out).toContain("pi-ro");
    expect(readdirSync(workspace).some((name) => name.startsWith(".pi.replaced-"))).toBe(true);
  });
});
