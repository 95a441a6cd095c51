/**
 * Durability across a crash of the real server process: events are in the database while the turn runs
 * (within a batch's moment), a run the crash interrupted is failed after restart (never half-committed),
 * and committed history is unchanged. On app.db, or on PostgreSQL with ATRIUM_TEST_DATABASE=postgres
 * (the server gets APP_DATABASE_URL, kept across the restart).
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { openDb } from "../../server/storage/db/open.ts";
import { freshPostgresDatabase } from "../helpers/postgres.ts";
import { type ServerProcess, startServerProcess, waitForOk } from "../helpers/server.ts";
import { readFrames } from "../helpers/streams.ts";
import { tempDir } from "../helpers/tmp.ts";
import { specEvents, turnRequest } from "../helpers/turns.ts";
import { waitFor } from "../helpers/wait.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine, so these tests get more time.
setDefaultTimeout(120_000);

const dir = tempDir();
const procs: ServerProcess[] = [];
afterAll(() => {
  for (const p of procs) p.proc.kill("SIGKILL");
  dir.remove();
});

const databaseUrl =
  process.env.ATRIUM_TEST_DATABASE === "postgres" ? await freshPostgresDatabase() : undefined;

async function start() {
  const server = await startServerProcess(["--port", "0", "--data-dir", dir.path], {
    // On PostgreSQL a crashed instance's run is failed once its lease lapses: a short lease here.
    env: {
      APP_SANDBOX_WARM: "1",
      ...(databaseUrl ? { APP_DATABASE_URL: databaseUrl, APP_LEASE_MS: "1000" } : {}),
    },
  });
  procs.push(server);
  await waitForOk(`${server.url}/health/ready`);
  return server;
}

describe("durability", () => {
  test("a crash mid-turn leaves the run failed after restart; committed turns never change", async () => {
    const first = await start();
    const created = await fetch(`${first.url}/api/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ title: "durable" }),
    });
    const session = ((await created.json()) as { id: string }).id;
    const done = specEvents(
      await readFrames(
        await fetch(
          `${first.url}/api/sessions/${session}/turns`,
          turnRequest({ text: "```python\nprint('kept')\n```" }),
        ),
      ),
    );
    expect(done.at(-1)?.type).toBe("turn_finish");
    const before = await (await fetch(`${first.url}/api/sessions/${session}/turns`)).json();

    const crashKey = crypto.randomUUID();
    const loop = { text: "```python\nwhile True:\n    pass\n```" };
    const response = await fetch(`${first.url}/api/sessions/${session}/turns`, turnRequest(loop, crashKey));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = "";
    while (!seen.includes("event: code")) seen += new TextDecoder().decode((await reader.read()).value);
    const runId = seen.match(/"runId":"(run_[0-9a-f]+)"/)?.[1] as string;

    // The events so far are committed before the turn ends (the log's batch waits a moment at most).
    const db = openDb({ url: databaseUrl, dataDir: dir.path });
    let logged: string[] = [];
    for (let i = 0; i < 250 && logged.length < 3; i++) {
      if (i > 0) await Bun.sleep(20);
      logged = (
        await db.all<{ type: string }>("SELECT type FROM turn_events WHERE run_id = ? ORDER BY seq", [runId])
      ).map((r) => r.type);
    }
    await db.close();
    expect(logged).toEqual(["turn_start", "step_start", "code"]);

    first.proc.kill("SIGKILL");
    await first.exited;
    await reader.cancel().catch(() => {});

    const second = await start();
    type History = {
      items: {
        runId: string;
        status: string;
        error: { code: string } | null;
        messages: { parts: { type: string }[] }[];
      }[];
    };
    const read = async () =>
      (await (await fetch(`${second.url}/api/sessions/${session}/turns`)).json()) as History;
    // SQLite fails it at start-up (one instance); PostgreSQL once the crashed instance's lease lapses.
    const history: History = await waitFor(
      async () => {
        const h = await read();
        return h.items.some((i) => i.runId === runId && i.status !== "running") ? h : undefined;
      },
      { timeoutMs: 30_000, what: "the crashed run to be failed" },
    );
    expect(history.items[0]).toEqual((before as typeof history).items[0] as (typeof history.items)[number]);
    const crashed = history.items.find((i) => i.runId === runId);
    expect(crashed?.status).toBe("failed");
    expect(crashed?.error?.code).toBe("interrupted");
    expect(crashed?.messages[1]?.parts.map((p) => p.type)).toEqual(["data-status"]);
    // Retrying the crashed turn's key replays what was committed, closed by a turn_error.
    const replay = specEvents(
      await readFrames(
        await fetch(`${second.url}/api/sessions/${session}/turns`, turnRequest(loop, crashKey)),
      ),
    );
    expect(replay.map((e) => e.type)).toEqual([
      "turn_status",
      "turn_start",
      "step_start",
      "code",
      "turn_error",
    ]);
    expect(replay[1]?.delivery).toBe("replay");
    expect(replay.at(-1)).toMatchObject({
      code: "interrupted",
      message: "The server stopped during this turn",
    });
    // The session is free again: a new turn runs.
    const after = specEvents(
      await readFrames(
        await fetch(
          `${second.url}/api/sessions/${session}/turns`,
          turnRequest({ text: "```python\nprint(2)\n```" }),
        ),
      ),
    );
    expect(after.at(-1)).toMatchObject({ type: "turn_finish", status: "completed" });
    second.proc.kill("SIGTERM");
    await second.exited;
  });
});
