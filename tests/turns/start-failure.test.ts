/**
 * A turn whose Python sandbox never starts: the start is tried twice (one retry), then the turn fails
 * with the contract's message, its code and a sentence saying why; the history keeps that sentence and the
 * time the turn really took; the server log has one line with the run, the owner, the code and the time.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import { memoryLogger } from "../helpers/app.ts";
import { tempDir } from "../helpers/tmp.ts";
import { createSession, runTurn, turnsApp } from "../helpers/turns.ts";

setDefaultTimeout(60_000);

test("a start that makes no progress is retried once, then fails the turn with a sentence, its real duration and a log line", async () => {
  const memory = memoryLogger();
  const hung = await turnsApp({ env: { APP_SANDBOX_WARM: "0" }, log: memory.log });
  const dir = tempDir("atrium-hung-start-");
  const starts = join(dir.path, "starts");
  // A sandbox that never says it is ready and uses no CPU: each start it makes is counted in a file.
  const script = `require("fs").appendFileSync(${JSON.stringify(starts)}, "x"); setInterval(() => {}, 1e6);`;
  hung.family("turns").runtime.sandbox.use(
    new InterpreterPool({
      warm: 0,
      isolation: "none",
      command: [process.execPath, "-e", script],
      startTimeoutMs: 400,
    }),
  );
  try {
    const session = await createSession(hung);
    const key = crypto.randomUUID();
    const { events } = await runTurn(hung, session, { text: "```python\nprint(1)\n```" }, key);
    const error = events.find((e) => e.type === "turn_error");
    expect(error).toMatchObject({
      message: "Turn is unavailable",
      code: "sandbox_start_timeout",
      detail: "The Python sandbox did not start: it made no progress for 0.4 s.",
    });
    // Two starts, each stopped after 0.4 s without progress: the turn took at least that.
    expect(readFileSync(starts, "utf8")).toBe("xx");
    expect(error?.durationMs).toBeGreaterThanOrEqual(800);

    const history = await hung.json<{
      items: {
        runId: string;
        status: string;
        durationMs: number;
        error: { code: string; message: string };
      }[];
    }>(`/api/sessions/${session}/turns`);
    const [item] = history.body.items;
    expect(item).toMatchObject({
      status: "failed",
      error: {
        code: "sandbox_start_timeout",
        message: "The Python sandbox did not start: it made no progress for 0.4 s.",
      },
    });
    expect(item?.durationMs).toBeGreaterThanOrEqual(800);

    // The replay of the failed turn has the same sentence and a real duration.
    const replay = await runTurn(hung, session, { text: "```python\nprint(1)\n```" }, key);
    const replayed = replay.events.find((e) => e.type === "turn_error");
    expect(replayed).toMatchObject({ code: "sandbox_start_timeout", detail: error?.detail });
    expect(replayed?.durationMs).toBe(item?.durationMs);

    const lines = memory.lines().filter((l) => l.msg === "turn failed: no sandbox");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      runId: item?.runId,
      owner: expect.any(String),
      code: "sandbox_start_timeout",
      detail: "The Python sandbox did not start: it made no progress for 0.4 s.",
    });
    expect(lines[0]?.durationMs).toBe(item?.durationMs);
  } finally {
    await hung.close();
    dir.remove();
  }
});
