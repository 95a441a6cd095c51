/**
 * Cancellation mid-step (a Python infinite loop is killed: exactly one turn_cancelled, nothing after it,
 * a tombstone in history) and isolation through a real turn (the Python cannot read the server's
 * environment or files, nor reach the server's own port).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processTree } from "../../server/sandbox/process-tree.ts";
import type { TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { readFrames } from "../helpers/streams.ts";
import { tempDir } from "../helpers/tmp.ts";
import { createSession, specEvents, turnRequest, turnsApp } from "../helpers/turns.ts";
import { processGone, waitFor } from "../helpers/wait.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine, so these tests get more time.
setDefaultTimeout(120_000);

let t: TestApp;
beforeAll(async () => {
  t = await turnsApp();
});
afterAll(() => t.close());

/** Sandbox processes of this checkout with their CPU time (clock ticks), from /proc. */
function sandboxProcesses(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (!cmd.includes("sandbox") || !cmd.some((c) => c.startsWith(join(import.meta.dir, "..", ".."))))
        continue;
      if (cmd[0]?.endsWith("bwrap")) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      out.set(Number(name), Number(stat[11]) + Number(stat[12]));
    } catch {}
  }
  return out;
}

describe("cancellation", () => {
  test("an infinite loop is killed; the stream ends with one turn_cancelled; history keeps a tombstone", async () => {
    const session = await createSession(t);
    const key = crypto.randomUUID();
    const loop = { text: "```python\nn = 0\nwhile True:\n    n += 1\n```" };
    const pool = t.family("turns").runtime.sandbox.pool;
    await waitFor(() => (pool?.readyCount ?? 0) >= 1, { timeoutMs: 60_000, what: "a warm interpreter" });
    const response = await t.request(`/api/sessions/${session}/turns`, turnRequest(loop, key));
    const [mine, rest] = (response.body as ReadableStream<Uint8Array>).tee();
    const reader = mine.getReader();
    let seen = "";
    while (!seen.includes("event: code")) seen += new TextDecoder().decode((await reader.read()).value);
    reader.releaseLock();
    void mine.cancel();
    const runId = seen.match(/"runId":"(run_[0-9a-f]+)"/)?.[1] as string;
    const base = sandboxProcesses();
    // The looping interpreter: a process of the turn's sandbox whose CPU time keeps growing. (Not any
    // sandbox process: in a whole run the pools other files keep warm may be starting interpreters, which
    // burn CPU while pyodide loads, and the pool's replacement for this one starts meanwhile.)
    const [sandbox] = pool?.turnPids ?? [];
    expect(sandbox).toBeGreaterThan(0);
    const busiest = await waitFor(
      () => {
        const tree = new Set(processTree(sandbox as number));
        return [...sandboxProcesses()].find(
          ([pid, ticks]) => tree.has(pid) && ticks - (base.get(pid) ?? ticks) >= 10,
        )?.[0];
      },
      { what: "the loop to burn CPU" },
    );

    // A retry of the same key while the turn runs follows it live (it is one durable turn).
    const follower = await t.request(`/api/sessions/${session}/turns`, turnRequest(loop, key));
    const followReader = (follower.body as ReadableStream<Uint8Array>).getReader();
    let followed = "";
    while (!followed.includes("event: code"))
      followed += new TextDecoder().decode((await followReader.read()).value);

    const cancel = await t.json<{ runId: string; status: string }>(`/api/runs/${runId}/cancellation`, {
      method: "PUT",
    });
    expect(cancel.status).toBe(202);
    expect(cancel.body).toEqual({ runId, status: "cancelling" });

    const frames = await readFrames(new Response(rest));
    const events = specEvents(frames);
    expect(events.filter((e) => e.type === "turn_cancelled")).toHaveLength(1);
    expect(events.at(-1)?.type).toBe("turn_cancelled");
    expect(
      events.some((e) => e.type === "turn_finish" || e.type === "usage" || e.type === "turn_error"),
    ).toBe(false);
    const compat = frames.filter((f) => !f.event && f.data !== "[DONE]").map((f) => JSON.parse(f.data).type);
    expect(compat.at(-1)).toBe("abort");
    expect(compat).not.toContain("finish");
    expect(compat).not.toContain("data-usage");
    expect(frames.at(-1)?.data).toBe("[DONE]");

    for (let r = await followReader.read(); !r.done; r = await followReader.read())
      followed += new TextDecoder().decode(r.value);
    const followedEvents = specEvents(await readFrames(new Response(followed)));
    expect(followedEvents.find((e) => e.type === "turn_start")).toMatchObject({ runId, delivery: "live" });
    expect(followedEvents.at(-1)?.type).toBe("turn_cancelled");

    // The looping interpreter is gone (killed at once; on a machine running a second suite the exit
    // can take longer to be reaped than the helper's default wait).
    await waitFor(() => processGone(busiest), { what: "the looping interpreter to exit", timeoutMs: 30_000 });

    const history = await t.json<{
      items: {
        runId: string;
        status: string;
        messages: { role: string; parts: unknown[] }[];
        usage: unknown;
      }[];
    }>(`/api/sessions/${session}/turns`);
    const tomb = history.body.items.find((i) => i.runId === runId);
    expect(tomb?.status).toBe("cancelled");
    expect(tomb?.messages).toEqual([
      { role: "user", parts: [{ type: "text", text: "```python\nn = 0\nwhile True:\n    n += 1\n```" }] },
      {
        role: "assistant",
        parts: [
          { type: "data-status", data: { phase: "execution", status: "cancelled", message: null } },
          { type: "text", text: "Turn cancelled" },
        ],
      },
    ]);
    expect(tomb?.usage).toMatchObject({ llmCalls: 0 });

    // Cancelling again reports the settled state; another owner's or an unknown run is a 404.
    const again = await t.json<{ status: string }>(`/api/runs/${runId}/cancellation`, { method: "PUT" });
    expect(again).toMatchObject({ status: 200, body: { status: "cancelled" } });
    expect((await t.request("/api/runs/run_unknown/cancellation", { method: "PUT" })).status).toBe(404);
  });
});

describe("disconnect", () => {
  test("a client that goes away does not stop the turn: it commits and replays", async () => {
    const session = await createSession(t);
    const key = crypto.randomUUID();
    const body = {
      text: "```python\nprint('first')\n```\n```python\ntotal = sum(range(3_000_000))\nprint(total)\n```",
    };
    const response = await t.request(`/api/sessions/${session}/turns`, turnRequest(body, key));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = "";
    while (!seen.includes("event: code")) seen += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const committed = async () => {
      const history = await t.json<{ items: { status: string }[] }>(`/api/sessions/${session}/turns`);
      const status = history.body.items[0]?.status;
      return status !== "running" && status;
    };
    expect(await waitFor(committed, { timeoutMs: 60_000, intervalMs: 100, what: "the turn to commit" })).toBe(
      "completed",
    );
    const replay = specEvents(
      await readFrames(await t.request(`/api/sessions/${session}/turns`, turnRequest(body, key))),
    );
    expect(replay.filter((e) => e.type === "output" && !e.isDelta).map((e) => e.output)).toEqual([
      "first\n",
      "4499998500000\n",
    ]);
    expect(replay.at(-1)?.type).toBe("turn_finish");
  });
});

describe("isolation through a turn", () => {
  test("the turn's Python gets nothing of the host: environment, files, the server's own port", async () => {
    const canary = `canary-${crypto.randomUUID()}`;
    process.env.ATRIUM_TURN_CANARY = canary;
    const dir = tempDir();
    writeFileSync(join(dir.path, "host.txt"), canary);
    const server = listen(t);
    try {
      const port = new URL(server.url).port;
      const js = (body: string) =>
        `F = to_js({}).constructor.constructor\ntry:\n    print(F(${JSON.stringify(body)})())\nexcept Exception as e:\n    print('refused', type(e).__name__)`;
      const blocks = [
        "import os\nprint(dict(os.environ))",
        "import js\nprint(getattr(js, 'process', 'no process'))",
        "from pyodide.code import run_js\ntry:\n    run_js('1')\nexcept Exception as e:\n    print('refused', type(e).__name__)",
        "from pyodide.ffi import to_js",
        js("return JSON.stringify(process.env)"),
        js(`return process.getBuiltinModule('fs').readFileSync('${join(dir.path, "host.txt")}', 'utf8')`),
        `try:\n    print(open('${join(dir.path, "host.txt")}').read())\nexcept OSError as e:\n    print('refused', type(e).__name__)`,
        js(
          `fetch('http://127.0.0.1:${port}/api/sessions', {method: 'POST', headers: {'content-type': 'application/json'}, body: JSON.stringify({title: 'escaped'})}); return 'sent'`,
        ),
        `import socket\ntry:\n    s = socket.create_connection(('127.0.0.1', ${port}), timeout=1)\n    s.sendall(b'GET /health HTTP/1.0\\r\\n\\r\\n')\n    print('got', s.recv(100))\nexcept OSError as e:\n    print('refused', type(e).__name__)`,
      ];
      const text = blocks.map((b) => `\`\`\`python\n${b}\n\`\`\``).join("\n");
      const session = await createSession(t);
      // The turn takes a warm interpreter (APP_SANDBOX_WARM=1): one of those alive now.
      const pool = t.family("turns").runtime.sandbox.pool;
      await waitFor(() => (pool?.readyCount ?? 0) >= 1, { timeoutMs: 60_000, what: "a warm interpreter" });
      const before = sandboxProcesses();
      const response = await fetch(`${server.url}/api/sessions/${session}/turns`, turnRequest({ text }));
      const events = specEvents(await readFrames(response));
      const outputs = events.filter((e) => e.type === "output" && !e.isDelta).map((e) => e.output as string);
      expect(outputs).toHaveLength(blocks.length);
      const all = outputs.join("\n");
      expect(all).not.toContain(canary);
      expect(all).not.toContain("ATRIUM_TURN_CANARY");
      expect(outputs[8]).toContain("refused");
      expect(all).not.toContain("Atrium");
      // Once the turn's interpreter is gone nothing more can leave it (the list below is a request of our
      // own through the same server, after anything it sent). It is the one that ran: its CPU time grew
      // (it may be gone already).
      const after = sandboxProcesses();
      const ran = [...before].filter(([pid, ticks]) => (after.get(pid) ?? Number.POSITIVE_INFINITY) > ticks);
      expect(ran.length).toBeGreaterThan(0);
      await waitFor(() => ran.some(([pid]) => processGone(pid)), { what: "the turn's interpreter to exit" });
      const sessions = await t.json<{ items: { title: string }[] }>("/api/sessions?limit=200");
      expect(sessions.body.items.some((s) => s.title === "escaped")).toBe(false);
    } finally {
      delete process.env.ATRIUM_TURN_CANARY;
      await server.stop();
      dir.remove();
    }
  });
});
