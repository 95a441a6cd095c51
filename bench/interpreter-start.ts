/**
 * Interpreter start: spawn → ready, from the memory snapshot (server/sandbox/snapshot.ts) against a cold
 * pyodide load, both in the real jail, interleaved so both see the same machine load. Prints p50 and p95
 * of wall-clock time and of the interpreter's own CPU time, and the ratio snapshot ÷ cold. The snapshot
 * is made first in a temp cache folder (its making time is printed too).
 *
 *   bun bench/interpreter-start.ts [--runs 8]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { InterpreterPool } from "../server/sandbox/interpreter-pool.ts";
import { fmt, percentile } from "./lib/stats.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "8" } } });
const runs = Number(values.runs);

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
  for (let i = 0; i < runs; i++) {
    for (const [kind, pool] of [
      ["snapshot", fromSnapshot],
      ["cold", cold],
    ] as const) {
      const py = await pool.acquire();
      const stats = py.startStats;
      if (!stats || stats.snapshot !== (kind === "snapshot")) throw new Error(`${kind} start was not one`);
      wall[kind].push(stats.wallMs);
      cpu[kind].push(stats.cpuMs ?? Number.NaN);
      pool.release(py);
      await py.whenExited();
    }
  }
  const line = (kind: "snapshot" | "cold") =>
    `  ${kind.padEnd(9)} wall p50 ${fmt(percentile(wall[kind], 50))} ms  p95 ${fmt(percentile(wall[kind], 95))} ms   CPU p50 ${fmt(percentile(cpu[kind], 50))} ms  p95 ${fmt(percentile(cpu[kind], 95))} ms`;
  console.log(`Interpreter spawn → ready in the jail, ${runs} of each, interleaved:`);
  console.log(line("snapshot"));
  console.log(line("cold"));
  console.log(
    `  snapshot ÷ cold: wall p50 ${fmt(percentile(wall.snapshot, 50) / percentile(wall.cold, 50), 2)}, CPU p50 ${fmt(percentile(cpu.snapshot, 50) / percentile(cpu.cold, 50), 2)} (aim: wall p50 ≤ 500 ms idle)`,
  );
} finally {
  fromSnapshot.close();
  cold.close();
  rmSync(cache, { recursive: true, force: true });
}
