/**
 * Interpreter start: spawn → ready, from the memory snapshot (server/sandbox/snapshot.ts) against a cold
 * pyodide load, both in the real jail, interleaved so both see the same machine load. Prints p50 and p95
 * of wall-clock time and of the interpreter's own CPU time, and the ratio snapshot ÷ cold. The snapshot
 * is made first in a temp cache folder (its making time is printed too). Then, from what each snapshot
 * start reported (protocol.ts StartReport), p50 of when its phases ended after its process started: the
 * worker's code began (bubblewrap, Bun and module loading before it), pyodide was restored, ready sent.
 *
 *   bun bench/interpreter-start.ts [--runs 8] [--cold-runs N (default: runs)]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { InterpreterPool } from "../server/sandbox/interpreter-pool.ts";
import { fmt, percentile } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "8" }, "cold-runs": { type: "string" } },
});
const runs = Number(values.runs);
const coldRuns = Number(values["cold-runs"] ?? runs);

const cache = mkdtempSync(join(tmpdir(), "atrium-bench-snapshot-"));
// warm 0: every acquire below is a start measured from spawn.
const fromSnapshot = new InterpreterPool({ warm: 0, snapshotDir: cache });
const cold = new InterpreterPool({ warm: 0 });
try {
  const made = performance.now();
  await fromSnapshot.warm();
  console.log(
    `Snapshot made in ${fmt(performance.now() - made)} ms (once per pyodide version, prelude, shape)`,
  );
  const wall = { snapshot: [] as number[], cold: [] as number[] };
  const cpu = { snapshot: [] as number[], cold: [] as number[] };
  const phases = { worker: [] as number[], loaded: [] as number[], ready: [] as number[] };
  let fast = 0;
  for (let i = 0; i < runs; i++) {
    for (const [kind, pool] of [
      ["snapshot", fromSnapshot],
      ["cold", cold],
    ] as const) {
      if (kind === "cold" && i >= coldRuns) continue;
      const py = await pool.acquire();
      const stats = py.startStats;
      if (!stats || stats.snapshot !== (kind === "snapshot")) throw new Error(`${kind} start was not one`);
      wall[kind].push(stats.wallMs);
      cpu[kind].push(stats.cpuMs ?? Number.NaN);
      if (kind === "snapshot" && stats.report) {
        phases.worker.push(stats.report.workerMs);
        phases.loaded.push(stats.report.loadedMs);
        phases.ready.push(stats.report.readyMs);
        const bulk = stats.report.patched.includes("table") && stats.report.patched.includes("restore");
        if (stats.report.earlyCompile && stats.report.untranspiled && bulk) fast++;
      }
      pool.release(py);
      await py.whenExited();
    }
  }
  const line = (kind: "snapshot" | "cold") =>
    `  ${kind.padEnd(9)} wall p50 ${fmt(percentile(wall[kind], 50))} ms  p95 ${fmt(percentile(wall[kind], 95))} ms   CPU p50 ${fmt(percentile(cpu[kind], 50))} ms  p95 ${fmt(percentile(cpu[kind], 95))} ms`;
  console.log(
    `Interpreter spawn → ready in the jail, ${runs} from the snapshot, ${Math.min(runs, coldRuns)} cold, interleaved:`,
  );
  console.log(line("snapshot"));
  console.log(line("cold"));
  console.log(
    `  snapshot ÷ cold: wall p50 ${fmt(percentile(wall.snapshot, 50) / percentile(wall.cold, 50), 2)}, CPU p50 ${fmt(percentile(cpu.snapshot, 50) / percentile(cpu.cold, 50), 2)} (aim: wall p50 ≤ 500 ms idle)`,
  );
  const p50 = (xs: number[]) => fmt(percentile(xs, 50));
  console.log(
    `  from the snapshot, phases (p50, ms after its process started): worker code begins ${p50(phases.worker)}, pyodide restored ${p50(phases.loaded)}, ready sent ${p50(phases.ready)}; ${fast}/${runs} took every faster path (runtime compiled early, Emscripten module untranspiled, table grown and memory restored in bulk)`,
  );
} finally {
  fromSnapshot.close();
  cold.close();
  rmSync(cache, { recursive: true, force: true });
}
