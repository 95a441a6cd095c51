/**
 * Turns: the cost of the sandbox boundary and of opening a turn.
 *
 * 1. A trivial Python step in a warm sandboxed interpreter (subprocess + bubblewrap + JSON-lines pipe)
 *    against a bare pyodide `runPython` in this process (no boundary), measured in the same run: the
 *    difference is the step overhead (aim < 5 ms).
 * 2. Cold interpreter start (spawn → pyodide ready), which the warm pool hides.
 * 3. Turn open → `turn_start` on a real server with a warm pool, offline model.
 *
 *   bun bench/turns.ts [--steps 300] [--turns 10]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadPyodide } from "pyodide";
import { parseCli } from "../server/config/cli.ts";
import { createEnvSource } from "../server/config/env.ts";
import { loadConfig } from "../server/config/index.ts";
import { startServer } from "../server/lifecycle.ts";
import { silentLogger } from "../server/log.ts";
import { Interpreter } from "../server/sandbox/interpreter.ts";
import { pyodideDir, sandboxCommand } from "../server/sandbox/isolation.ts";
import { SandboxPool } from "../server/sandbox/pool.ts";
import { servicesOf } from "../server/turns/index.ts";
import { fmt, median, percentile } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { steps: { type: "string", default: "300" }, turns: { type: "string", default: "10" } },
});
const steps = Number(values.steps);
const turns = Number(values.turns);
const repo = join(import.meta.dir, "..");

async function stepRoundTrip() {
  const pool = new SandboxPool({ warm: 1 });
  await pool.warm();
  const py = await pool.acquire();
  await py.init([], {}, 10_000);
  const bare = await loadPyodide({ indexURL: `${pyodideDir()}/`, stdout: () => {}, stderr: () => {} });
  const sandboxed: number[] = [];
  const inProcess: number[] = [];
  for (let i = 0; i < 20; i++) {
    await py.run("x = 1", { timeoutMs: 10_000 });
    bare.runPython("x = 1");
  }
  // Interleaved, so both see the same machine load.
  for (let i = 0; i < steps; i++) {
    let t0 = performance.now();
    await py.run("x = 1", { timeoutMs: 10_000 });
    sandboxed.push(performance.now() - t0);
    t0 = performance.now();
    bare.runPython("x = 1");
    inProcess.push(performance.now() - t0);
  }
  pool.release(py);
  pool.close();
  const s = median(sandboxed);
  const b = median(inProcess);
  console.log(`Python step round trip, trivial code (median of ${steps}, interleaved):`);
  console.log(`  bare pyodide runPython in process   ${fmt(b, 3)} ms`);
  console.log(
    `  warm sandboxed interpreter          ${fmt(s, 3)} ms (p95 ${fmt(percentile(sandboxed, 95), 3)} ms)   ratio ${fmt(s / Math.max(b, 0.001), 1)}   overhead ${fmt(s - b, 3)} ms (aim < 5 ms)`,
  );
}

async function coldInterpreter(runs = 3) {
  const command = sandboxCommand(new SandboxPool({ warm: 0 }).isolation);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const interpreter = new Interpreter(command);
    await interpreter.ready;
    times.push(performance.now() - t0);
    interpreter.kill();
  }
  console.log(
    `Cold interpreter start (spawn → pyodide ready): median ${fmt(median(times))} ms over ${runs} (hidden by the warm pool)`,
  );
}

async function turnOpen() {
  const data = mkdtempSync(join(tmpdir(), "atrium-bench-turns-"));
  const cli = parseCli(["--port", "0", "--data-dir", data], {}, repo);
  if (cli.kind !== "serve") throw new Error("unexpected CLI result");
  const env = createEnvSource({ APP_SANDBOX_WARM: "2" });
  const server = await startServer({ config: loadConfig(cli.options, env), env, log: silentLogger });
  try {
    const session = (await (
      await fetch(`${server.url}/api/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "bench" }),
      })
    ).json()) as { id: string };
    const open: number[] = [];
    const whole: number[] = [];
    for (let i = 0; i < turns; i++) {
      // Let the pool refill: this measures a turn that finds a warm interpreter, as the pool intends.
      while ((servicesOf(server.ctx).pool?.readyCount ?? 0) < 1) await Bun.sleep(50);
      const t0 = performance.now();
      const response = await fetch(`${server.url}/api/sessions/${session.id}/turns`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
        body: JSON.stringify({ text: "```python\nprint(1)\n```" }),
      });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let seen = "";
      let opened = 0;
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        seen += new TextDecoder().decode(r.value);
        if (!opened && seen.includes("event: turn_start")) opened = performance.now() - t0;
      }
      open.push(opened);
      whole.push(performance.now() - t0);
    }
    console.log(
      `Turn open → turn_start (warm pool, offline model): median ${fmt(median(open), 1)} ms; whole one-step turn to [DONE]: median ${fmt(median(whole), 1)} ms (${turns} turns)`,
    );
  } finally {
    await server.stop();
    rmSync(data, { recursive: true, force: true });
  }
}

await stepRoundTrip();
await coldInterpreter();
await turnOpen();
process.exit(0);
