/**
 * The server's side of a sandbox's memory bound, per spawned sandbox process: with a memory cgroup the
 * kernel stops the sandbox and this reads, when it has exited, whether that is why (and removes its
 * cgroups); without one, a watchdog sums the real memory of the sandbox's whole process tree a few
 * times a second and stops it past the limit. Either way the caller learns "memory" as the reason, so
 * the user reads that the code used too much memory, not that the interpreter vanished.
 */
import { readdirSync, readFileSync } from "node:fs";
import { removeSandboxCgroups, sweepCgroups, wasOomKilled } from "./cgroup.ts";
import { detectSandbox, type Isolation } from "./isolation.ts";
import type { SandboxLimits } from "./limits.ts";

export interface Confinement {
  /** A sandbox was spawned as `pid`; `kill` stops it. */
  watch(pid: number, kill: () => void): void;
  /** The sandbox `pid` exited: "memory" when it was stopped for using too much. Cleans up after it. */
  exited(pid: number): "memory" | undefined;
  /** Cleans up after every sandbox (the pool is closing). */
  close(): void;
}

const WATCH_INTERVAL_MS = 250;

/**
 * A process's own memory (bytes): anonymous and shared-memory pages, not file-backed ones (libraries and
 * the runtime's files are shared by every process of the tree and would be counted again for each).
 */
function ownMemory(pid: number): number {
  let kib = 0;
  for (const line of readFileSync(`/proc/${pid}/status`, "utf8").split("\n")) {
    if (line.startsWith("RssAnon:") || line.startsWith("RssShmem:"))
      kib += Number.parseInt(line.slice(9), 10);
  }
  return kib * 1024;
}

/**
 * Memory of `pid` and every process under it (bytes), from /proc: cheap enough to poll (a process's
 * proportional share, smaps_rollup, costs ~20 ms on pyodide's large reservations). Pages a fork still
 * shares with its parent count for each: forking a whole interpreter is not something Python does.
 */
export function treeMemory(pid: number): number {
  let total = 0;
  const queue = [pid];
  for (let seen = 0; queue.length > 0 && seen < 4096; seen++) {
    const next = queue.pop() as number;
    try {
      total += ownMemory(next);
      for (const task of readdirSync(`/proc/${next}/task`)) {
        const children = readFileSync(`/proc/${next}/task/${task}/children`, "utf8").trim();
        if (children) for (const child of children.split(" ")) queue.push(Number(child));
      }
    } catch {
      // The process exited while being read.
    }
  }
  return total;
}

export function confinementFor(isolation: Isolation, limits: SandboxLimits): Confinement {
  const detected = isolation === "bubblewrap" ? detectSandbox() : undefined;
  const cgroups = detected?.plan?.cgroups;
  const watchdog = process.platform === "linux" && !cgroups?.memory;
  const timers = new Map<number, ReturnType<typeof setInterval>>();
  const overLimit = new Set<number>();
  return {
    watch(pid, kill) {
      if (!watchdog) return;
      const timer = setInterval(() => {
        if (treeMemory(pid) <= limits.memoryBytes) return;
        overLimit.add(pid);
        clearInterval(timer);
        kill();
      }, WATCH_INTERVAL_MS);
      timer.unref?.();
      timers.set(pid, timer);
    },
    exited(pid) {
      clearInterval(timers.get(pid));
      timers.delete(pid);
      let memory = overLimit.delete(pid);
      if (cgroups) {
        memory ||= wasOomKilled(cgroups, pid);
        removeSandboxCgroups(cgroups, pid);
        sweepCgroups(cgroups);
      }
      return memory ? "memory" : undefined;
    },
    close() {
      for (const timer of timers.values()) clearInterval(timer);
      timers.clear();
      if (cgroups) sweepCgroups(cgroups);
    },
  };
}
