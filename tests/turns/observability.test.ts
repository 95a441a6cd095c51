/**
 * Analytics events to a PostHog-compatible /capture/ endpoint (only with the token variable set; one
 * per-installation distinct_id file), local tracing spans with an exposed traceId, and the sandbox's
 * isolation policy: protected mode refuses to run code without the jail, local mode still runs it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import type { TestApp } from "../helpers/app.ts";
import { startServerProcess } from "../helpers/server.ts";
import { tempDir } from "../helpers/tmp.ts";
import { createSession, runTurn, turnRequest, turnsApp } from "../helpers/turns.ts";
import { asUser, twoUsers } from "../helpers/users.ts";
import { processGone, waitFor } from "../helpers/wait.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine, so these tests get more time.
setDefaultTimeout(120_000);

const captured: {
  event: string;
  distinct_id: string;
  api_key: string;
  properties: Record<string, unknown>;
}[] = [];
const capture = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    if (new URL(request.url).pathname === "/capture/") captured.push(await request.json());
    return new Response("{}");
  },
});
afterAll(() => capture.stop(true));

describe("analytics and tracing", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await turnsApp({
      env: { APP_ANALYTICS_TOKEN: "phc_test_token" },
      edits: [
        ['host = "https://us.i.posthog.com"', `host = "http://127.0.0.1:${capture.port}/"`],
        ["expose_trace_id = false", "expose_trace_id = true"],
        ["autonomous_memory_categories = []", 'autonomous_memory_categories = ["preferences"]'],
      ],
    });
  });
  afterAll(() => t.close());

  test("events go to /capture/ with the installation's distinct_id; turns carry a traceId with spans", async () => {
    const session = await createSession(t);
    await t.request("/api/skills");
    const { events } = await runTurn(t, session, {
      text: "```python\nprint(propose_memory('preferences', 'likes short answers'))\n```",
    });
    // propose_memory exists because a category is configured; the proposal is promoted after commit.
    expect(events.find((e) => e.type === "output" && !e.isDelta)?.output).toContain("'accepted': True");
    const memory = await t.json<{ content: string }>("/api/files/content?path=memories/preferences.md");
    expect(memory.body.content).toBe("- likes short answers\n");
    const failed = await runTurn(t, "ses_missing", { text: "x" });
    expect(failed.events.find((e) => e.type === "turn_error")?.message).toBe("Session not found");
    await t.family("turns").runtime.analytics.drain();
    const names = captured.map((c) => c.event);
    expect(names).toContain("session_created");
    expect(names).toContain("skill_listed");
    expect(names).toContain("turn_created");
    expect(names).toContain("turn_failed");
    const id = readFileSync(join(t.dataDir, "analytics-instance-id"), "utf8").trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    for (const c of captured) {
      expect(c.distinct_id).toBe(id);
      expect(c.api_key).toBe("phc_test_token");
      expect(JSON.stringify(c)).not.toContain("local");
    }

    const start = events.find((e) => e.type === "turn_start");
    const finish = events.find((e) => e.type === "turn_finish");
    expect(start?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(finish?.traceId).toBe(start?.traceId);
    const spans = await t.family("turns").runtime.tracer.spans("local", start?.traceId);
    expect(spans.map((s) => s.name).sort()).toEqual(["step 1", "tool propose_memory", "turn"]);
    expect(spans.every((s) => s.run_id === start?.runId)).toBe(true);
  });

  test("without the token variable nothing is sent", async () => {
    const quiet = await turnsApp({
      env: { APP_SANDBOX_WARM: "0" },
      edits: [['host = "https://us.i.posthog.com"', `host = "http://127.0.0.1:${capture.port}"`]],
    });
    try {
      const count = captured.length;
      await createSession(quiet);
      await quiet.request("/api/skills");
      await quiet.family("turns").runtime.analytics.drain();
      expect(captured.length).toBe(count);
      expect(quiet.family("turns").runtime.analytics.enabled).toBe(false);
    } finally {
      await quiet.close();
    }
  });
});

describe("isolation policy", () => {
  test("protected mode refuses to run code when isolation is none", async () => {
    const t = await turnsApp(twoUsers({ env: { APP_SANDBOX_WARM: "0" } }));
    try {
      t.family("turns").runtime.sandbox.use(new InterpreterPool({ warm: 0, isolation: "none" }));
      const headers = asUser("alice", { "content-type": "application/json" });
      const created = await t.json<{ id: string }>("/api/sessions", {
        method: "POST",
        headers,
        body: JSON.stringify({ title: "p" }),
      });
      const response = await t.request(`/api/sessions/${created.body.id}/turns`, {
        method: "POST",
        headers: { ...headers, "idempotency-key": "k1" },
        body: JSON.stringify({ text: "```python\nprint(1)\n```" }),
      });
      const text = await response.text();
      expect(text).toContain('"message":"Turn is unavailable"');
      expect(text).toContain('"code":"sandbox_isolation_unavailable"');
      expect(text).not.toContain("event: code");
      // Unauthenticated requests never reach the family.
      expect((await t.request("/api/sessions")).status).toBe(401);
    } finally {
      await t.close();
    }
  });

  test("local mode without the jail still runs code, in a subprocess with an empty environment", async () => {
    const t = await turnsApp({ env: { APP_SANDBOX_WARM: "0" } });
    process.env.ATRIUM_NONE_CANARY = "canary-none-123";
    try {
      t.family("turns").runtime.sandbox.use(new InterpreterPool({ warm: 0, isolation: "none" }));
      const session = await createSession(t);
      const { events } = await runTurn(t, session, {
        text: "```python\nfrom pyodide.ffi import to_js\nprint(to_js({}).constructor.constructor('return JSON.stringify(process.env)')())\n```",
      });
      const output = events.find((e) => e.type === "output" && !e.isDelta)?.output as string;
      expect(output).toBeDefined();
      expect(output).not.toContain("canary-none-123");
      expect(events.at(-1)).toMatchObject({ type: "turn_finish", status: "completed" });
    } finally {
      delete process.env.ATRIUM_NONE_CANARY;
      await t.close();
    }
  });
});

describe("sandbox lifetime", () => {
  test("without the jail, an interpreter stuck in Python still dies with its server", async () => {
    const dir = tempDir();
    // A server without bubblewrap on its PATH: isolation "none", the plain subprocess.
    const server = await startServerProcess(["--port", "0", "--data-dir", dir.path], {
      env: { PATH: "/nonexistent" },
    });
    try {
      const ready = await (await fetch(`${server.url}/health/ready`)).json();
      expect(ready.sandbox.isolation).toBe("none");
      const created = await fetch(`${server.url}/api/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "loop" }),
      });
      const session = ((await created.json()) as { id: string }).id;
      const response = await fetch(
        `${server.url}/api/sessions/${session}/turns`,
        turnRequest({ text: "```python\nwhile True:\n    pass\n```" }),
      );
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let seen = "";
      while (!seen.includes("event: code")) seen += new TextDecoder().decode((await reader.read()).value);
      const children = readFileSync(`/proc/${server.proc.pid}/task/${server.proc.pid}/children`, "utf8")
        .trim()
        .split(/\s+/)
        .map(Number);
      expect(children.length).toBeGreaterThan(0);
      server.proc.kill("SIGKILL");
      await server.exited;
      await waitFor(() => children.every(processGone), {
        timeoutMs: 5000,
        what: "the sandbox processes to exit",
      });
    } finally {
      server.proc.kill("SIGKILL");
      dir.remove();
    }
  });
});
