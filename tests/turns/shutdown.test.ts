/**
 * Ctrl-C while a turn's Python runs (the real server process, SIGTERM): each open turn stream ends with
 * exactly one terminal event saying the server is stopping and `[DONE]` (compat form: `error`, then
 * `[DONE]`), not a cut connection; the process exits cleanly; after a restart history shows the turns
 * failed with that code.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type ServerProcess, startServerProcess, waitForOk } from "../helpers/server.ts";
import { readFrames } from "../helpers/streams.ts";
import { tempDir } from "../helpers/tmp.ts";
import { specEvents, turnRequest } from "../helpers/turns.ts";

// Turns start pyodide interpreters: seconds each on a loaded machine, so these tests get more time.
setDefaultTimeout(120_000);

const dir = tempDir();
const procs: ServerProcess[] = [];
afterAll(() => {
  for (const p of procs) p.proc.kill("SIGKILL");
  dir.remove();
});

async function start() {
  const server = await startServerProcess(["--port", "0", "--data-dir", dir.path], {
    env: { APP_SANDBOX_WARM: "2" },
  });
  procs.push(server);
  await waitForOk(`${server.url}/health/ready`);
  return server;
}

async function session(url: string): Promise<string> {
  const response = await fetch(`${url}/api/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title: "stopping" }),
  });
  return ((await response.json()) as { id: string }).id;
}

/** Opens a looping turn; resolves once its Python runs, with the rest of the body still to read. */
async function loopingTurn(url: string, format = "") {
  const id = await session(url);
  const response = await fetch(
    `${url}/api/sessions/${id}/turns${format}`,
    turnRequest({ text: "```python\nwhile True:\n    pass\n```" }),
  );
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let seen = "";
  while (!seen.includes("code")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended early: ${seen}`);
    seen += decoder.decode(value, { stream: true });
  }
  const rest = (async () => {
    let text = seen;
    for (let r = await reader.read(); !r.done; r = await reader.read())
      text += decoder.decode(r.value, { stream: true });
    return text;
  })();
  return { session: id, runId: seen.match(/"runId":"(run_[0-9a-f]+)"/)?.[1] as string, rest };
}

describe("shutdown during a turn", () => {
  test("SIGTERM ends each turn stream with one server_stopping terminal and [DONE]; history shows it failed", async () => {
    const server = await start();
    const spec = await loopingTurn(server.url);
    const compat = await loopingTurn(server.url, "?format=ui-message-stream");
    server.proc.kill("SIGTERM");

    const specFrames = await readFrames(new Response(await spec.rest));
    const events = specEvents(specFrames);
    const terminals = events.filter((e) => ["turn_finish", "turn_error", "turn_cancelled"].includes(e.type));
    expect(terminals).toEqual([
      expect.objectContaining({ type: "turn_error", code: "server_stopping" }) as never,
    ]);
    expect(events.at(-1)?.type).toBe("turn_error");
    expect(specFrames.at(-1)?.data).toBe("[DONE]");

    const compatFrames = await readFrames(new Response(await compat.rest));
    const chunks = compatFrames.filter((f) => f.data !== "[DONE]").map((f) => JSON.parse(f.data));
    expect(chunks.filter((c) => c.type === "error" || c.type === "finish" || c.type === "abort")).toEqual([
      { type: "error", errorText: "The server is stopping; this turn was stopped" },
    ]);
    expect(chunks.at(-1)?.type).toBe("error");
    expect(compatFrames.at(-1)?.data).toBe("[DONE]");
    expect(await server.exited).toBe(0);

    // The stopping server committed both turns as failed (a restart finds nothing left running).
    const again = await start();
    for (const turn of [spec, compat]) {
      const history = (await (await fetch(`${again.url}/api/sessions/${turn.session}/turns`)).json()) as {
        items: { runId: string; status: string; error: { code: string } }[];
      };
      expect(history.items.map((i) => [i.runId, i.status, i.error.code])).toEqual([
        [turn.runId, "failed", "server_stopping"],
      ]);
    }
    again.proc.kill("SIGTERM");
    expect(await again.exited).toBe(0);
  });
});
