/**
 * Measuring a server process from outside: its resident memory, the CPU time it has used, and a cold
 * start to readiness.
 */
import { readFileSync } from "node:fs";
import type { Subprocess } from "bun";

/** Resident set size of a process in MiB (Linux /proc; 0 elsewhere). */
export function rssMiB(pid: number): number {
  if (process.platform !== "linux") return 0;
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024;
}

/** User plus system CPU seconds a process has used so far (Linux /proc; 0 elsewhere). */
export function cpuSeconds(pid: number): number {
  if (process.platform !== "linux") return 0;
  // Fields after the parenthesised command name; utime and stime are the 12th and 13th of them.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface ColdStart {
  proc: Subprocess<"ignore", "pipe", "ignore">;
  url: string;
  /** From spawn to the first 200 of /health/ready. */
  readyMs: number;
}

/**
 * Spawns `argv --port 0 --data-dir dataDir` with a bare environment (plus `env`) and waits until it is
 * ready.
 */
export async function coldStart(
  argv: string[],
  cwd: string,
  dataDir: string,
  env: Record<string, string> = {},
): Promise<ColdStart> {
  const started = performance.now();
  const proc = Bun.spawn([...argv, "--port", "0", "--data-dir", dataDir], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: dataDir, ...env },
    stdout: "pipe",
    stderr: "ignore",
  });
  const line = new TextDecoder().decode((await proc.stdout.getReader().read()).value);
  const url = (line.split("\n")[0] ?? "").trim().replace("listening on ", "");
  const ready = () =>
    fetch(`${url}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
  while (!(await ready())) await Bun.sleep(2);
  return { proc, url, readyMs: performance.now() - started };
}
