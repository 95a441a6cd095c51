/**
 * The sandbox ceiling through real turns (real pyodide): a burst of turns beyond the pool's ceiling all
 * finish, no more interpreters are ever alive than the ceiling, the turns in line say so with their place
 * (and then that their sandbox is starting), and time in line does not count against the preparation
 * timeout. Also: a listening server warms its
 * pool in the background right after composing (readiness does not wait), a test app that never listens
 * starts no interpreter, and a sandbox that never gets ready fails its turn with a clear code.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { parseCli } from "../../server/config/cli.ts";
import { createEnvSource } from "../../server/config/env.ts";
import { loadConfig } from "../../server/config/index.ts";
import { startServer } from "../../server/lifecycle.ts";
import { silentLogger } from "../../server/log.ts";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import { createTestApp, REPO_ROOT, type TestApp } from "../helpers/app.ts";
import { readFrames } from "../helpers/streams.ts";
import { tempDir } from "../helpers/tmp.ts";
import { createSession, type Ev, runTurn, specEvents, turnRequest, turnsApp } from "../helpers/turns.ts";
import { waitFor } from "../helpers/wait.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine, so these tests get more time.
setDefaultTimeout(180_000);

const PREPARATION_SECONDS = 15;
let t: TestApp;
beforeAll(async () => {
  t = await turnsApp({
    env: { APP_SANDBOX_WARM: "2" },
    edits: [
      ["max_interpreters = 0", "max_interpreters = 2"],
      ["heartbeat_seconds = 5", "heartbeat_seconds = 0.2"],
      ["preparation_timeout_seconds = 30", `preparation_timeout_seconds = ${PREPARATION_SECONDS}`],
    ],
  });
});
afterAll(() => t.close());

/** A turn's events, and how long it took from the POST to its `turn_start`. */
async function timedTurn(session: string, text: string): Promise<{ events: Ev[]; openedMs: number }> {
  const posted = Date.now();
  const response = await t.request(`/api/sessions/${session}/turns`, turnRequest({ text }));
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let body = "";
  let openedMs = 0;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    body += decoder.decode(r.value, { stream: true });
    if (!openedMs && body.includes("event: turn_start")) openedMs = Date.now() - posted;
  }
  return { events: specEvents(await readFrames(new Response(body))), openedMs };
}

describe("a burst beyond the ceiling", () => {
  test("six turns on a ceiling of two all finish, wait in line with their place, never past the ceiling", async () => {
    const pool = t.family("turns").runtime.sandbox.pool as InterpreterPool;
    await waitFor(() => pool.readyCount === 2, { timeoutMs: 60_000, what: "warm interpreters" });
    let peak = 0;
    const watching = setInterval(() => {
      peak = Math.max(peak, pool.stats().live);
    }, 10);
    const sessions = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => createSession(t, `burst ${i}`)));
    const turns = await Promise.all(
      sessions.map((session) =>
        // Two rounds of 8 s ahead of the last pair put its start past the preparation timeout (15 s) by
        // the sleeps alone, however fast interpreters start (from a snapshot, about a second).
        timedTurn(session, "```python\nimport time\ntime.sleep(8)\nprint('done')\n```"),
      ),
    );
    clearInterval(watching);
    expect(peak).toBe(2);
    for (const { events } of turns) {
      expect(events.find((e) => e.type === "turn_error")).toBeUndefined();
      expect(events.at(-1)).toMatchObject({ type: "turn_finish", status: "completed" });
      expect(events.find((e) => e.type === "output" && !e.isDelta)?.output).toBe("done\n");
    }
    const waiting = turns.flatMap(({ events }) =>
      events
        .filter((e) => e.type === "turn_status" && e.status === "waiting")
        .map((e) => e.message as string),
    );
    expect(waiting).toContain("waiting for a sandbox (place 4 in line)");
    expect(waiting).toContain("waiting for a sandbox (place 1 in line)");
    for (const message of waiting) expect(message).toMatch(/^waiting for a sandbox \(place [1-4] in line\)$/);
    // Out of the line, a turn whose interpreter still loads says so instead of a contentless keep-alive.
    const running = turns.flatMap(({ events }) =>
      events.filter((e) => e.type === "turn_status" && e.status === "running").map((e) => e.message),
    );
    expect(running).toContain("starting a sandbox");
    // The last turns took longer than the preparation timeout to start: their time in line did not count.
    expect(Math.max(...turns.map((turn) => turn.openedMs))).toBeGreaterThan(PREPARATION_SECONDS * 1000);
    // Three rounds of 8 s are 24 s of the suite's 30 s per test before any interpreter has started (26 s
    // on CI): the warm-up's own wait allows a minute, and so does the test.
  }, 120_000);
});

describe("warming", () => {
  test("a listening server warms its pool in the background; readiness does not wait for it", async () => {
    const data = tempDir();
    const cli = parseCli(["--port", "0", "--data-dir", data.path], {}, REPO_ROOT);
    if (cli.kind !== "serve") throw new Error("unexpected CLI result");
    const env = createEnvSource({ APP_SANDBOX_WARM: "1" });
    const server = await startServer({ config: loadConfig(cli.options, env), env, log: silentLogger });
    try {
      const pool = server.family("turns").runtime.sandbox.pool as InterpreterPool;
      const ready = await fetch(`${server.url}/health/ready`);
      expect(ready.status).toBe(200);
      // Ready before pyodide is: the warm interpreter is starting, not awaited.
      expect(pool.stats().live).toBe(1);
      // No request touched the turns family, and the interpreter becomes ready on its own.
      await waitFor(() => pool.readyCount === 1, { timeoutMs: 60_000, what: "warm interpreters" });
    } finally {
      await server.stop();
      data.remove();
    }
  }, 90_000);

  test("a test app that never listens starts no interpreter", async () => {
    // Composed and started like a server, but never serving: its pool (warm count 1) stays cold.
    const quiet = await createTestApp({ env: { APP_SANDBOX_WARM: "1" } });
    try {
      const pool = quiet.family("turns").runtime.sandbox.pool as InterpreterPool;
      expect(pool.stats()).toMatchObject({ live: 0, idle: 0 });
    } finally {
      await quiet.close();
    }
  });
});

describe("a sandbox that never gets ready", () => {
  test("the turn fails with sandbox_start_timeout, and history shows it failed", async () => {
    const hung = await turnsApp({ env: { APP_SANDBOX_WARM: "0" } });
    hung.family("turns").runtime.sandbox.use(
      new InterpreterPool({
        isolation: "none",
        command: [process.execPath, "-e", "setInterval(() => {}, 1e6)"],
        startTimeoutMs: 300,
      }),
    );
    try {
      const session = await createSession(hung);
      const { events } = await runTurn(hung, session, { text: "```python\nprint(1)\n```" });
      expect(events.filter((e) => e.type !== "turn_status").map((e) => [e.type, e.code])).toEqual([
        ["turn_error", "sandbox_start_timeout"],
        ["turn_finish", undefined],
      ]);
      expect(events.find((e) => e.type === "turn_error")?.message).toBe("Turn is unavailable");
      const history = await hung.json<{ items: { status: string; error: { code: string } }[] }>(
        `/api/sessions/${session}/turns`,
      );
      expect(history.body.items.map((i) => [i.status, i.error.code])).toEqual([
        ["failed", "sandbox_start_timeout"],
      ]);
    } finally {
      await hung.close();
    }
  });
});
