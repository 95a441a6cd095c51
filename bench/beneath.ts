/**
 * The cost of confining workspace file operations with openat2 (server/workspace/beneath.ts), against
 * the old checked-path code (lstat each segment, then plain path calls) measured in the same run, on
 * the same store: Files API writes (create + overwrite, `put`), reads (`readText`) and a listing of a
 * folder of 200 files. Rounds interleave the two modes; the ratio is of medians (per operation).
 *
 *   bun bench/beneath.ts [--ops 2000] [--rounds 7]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { TurnWorkspaceFiles } from "../server/turns/stores/workspace-files.ts";
import { beneathAvailable, forceBeneathFallback } from "../server/workspace/beneath.ts";
import { fmt, median } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { ops: { type: "string", default: "2000" }, rounds: { type: "string", default: "7" } },
});
const OPS = Number(values.ops);
const ROUNDS = Number(values.rounds);

if (!beneathAvailable()) {
  console.log("openat2 is not available here: nothing to compare");
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), "atrium-bench-beneath-"));
const files = new TurnWorkspaceFiles(dir, "local", 1 << 20);
const content = "x".repeat(1024);
for (let i = 0; i < 200; i++) await files.put(`list/f${i}.txt`, content);

const cases: [string, (i: number) => unknown][] = [
  ["write 1 KiB (a/b/c/file)", (i) => files.put(`a/b/c/f${i % 50}.txt`, content, { overwrite: true })],
  ["read 1 KiB (a/b/c/file)", (i) => files.readText(`a/b/c/f${i % 50}.txt`)],
  ["list 200 files", () => files.list("list")],
];

/** Microseconds per operation, `n` operations in one mode. */
async function measure(use: (i: number) => unknown, old: boolean, n: number): Promise<number> {
  forceBeneathFallback(old);
  const start = Bun.nanoseconds();
  for (let i = 0; i < n; i++) await use(i);
  const perOp = (Bun.nanoseconds() - start) / n / 1000;
  forceBeneathFallback(false);
  return perOp;
}

try {
  for (const [name, use] of cases) {
    const n = name.startsWith("list") ? Math.max(10, OPS / 20) : OPS;
    await measure(use, false, n / 4); // warm both paths
    await measure(use, true, n / 4);
    const fresh: number[] = [];
    const old: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      fresh.push(await measure(use, false, n));
      old.push(await measure(use, true, n));
    }
    const a = median(fresh);
    const b = median(old);
    console.log(
      `${name.padEnd(26)} openat2 ${fmt(a, 1).padStart(7)} µs/op   checked paths ${fmt(b, 1).padStart(7)} µs/op   ratio ${fmt(a / b, 2)}x`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
