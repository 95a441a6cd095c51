/**
 * The server's side of a sandbox's memory bound, per spawned sandbox process: with a memory cgroup the
 * kernel stops the sandbox and this reads, when it has exited, whether that is why (and removes its
 * cgroups); without one, a watchdog sums the real memory of the sandbox's whole process tree a few
 * times a second and stops it past the limit. Either way the caller learns "memory" as the reason, so
 * the user reads that the code used too much memory, not that the interpreter vanished.
 */
import { readFileSync } from "node:fs";
import { removeSandboxCgroups, sweepCgroups, wasOomKilled } from "./cgroup.ts";
import { detectSandbox, type Isolation } from "./isolation.ts";
import type { SandboxLimits } from "./limits.ts";
import { processTree } from "./process-tree.ts";

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
  for (const each of processTree(pid)) {
    try {
      total += ownMemory(each);
    } catch {
      // The process exited while being read.
    }
  }
  return total;
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on every Linux architecture in use). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (ms) used so far by `pid` and every process under it, children they reaped included; undefined
 * once `pid` is gone. What a start deadline measures: a busy machine slows a start, it does not make it use
 * more CPU.
 */
export function treeCpuMs(pid: number): number | undefined {
  let ticks = 0;
  let seen = false;
  for (const each of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${each}/stat`, "utf8");
      // Fields after the command name (which may hold spaces and parentheses): utime is the 12th.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      for (const at of [11, 12, 13, 14]) ticks += Number(fields[at]) || 0;
      if (each === pid) seen = true;
    } catch {
      // The process exited while being read.
    }
  }
  return seen ? (ticks * 1000) / TICKS_PER_SECOND : undefined;
}

/** How often a starting sandbox's CPU time is read. */
const START_POLL_MS = 200;

/**
 * A start deadline that a busy machine does not trip: calls `stop` (once) with the reason when the
 * process tree of `pid` has used `budgetMs` of CPU, or its CPU time stood still for `budgetMs` (a start
 * that hangs). Where /proc cannot say (not Linux), the wall-clock time since the call. Clear the returned
 * timer when the start is over.
 */
export function watchStart(
  pid: number,
  budgetMs: number,
  stop: (why: string) => void,
): ReturnType<typeof setInterval> {
  const seconds = `${Math.round(budgetMs / 100) / 10} s`;
  const startedAt = performance.now();
  let lastCpu = -1;
  let movedAt = startedAt;
  const timer = setInterval(
    () => {
      const now = performance.now();
      const cpu = process.platform === "linux" ? treeCpuMs(pid) : undefined;
      let why: string | undefined;
      if (cpu === undefined) {
        // Gone (its exit is reported elsewhere), or no /proc: then the wall clock.
        if (process.platform !== "linux" && now - startedAt >= budgetMs)
          why = `it was not ready after ${seconds}`;
      } else {
        if (cpu > lastCpu) {
          lastCpu = cpu;
          movedAt = now;
        }
        if (cpu >= budgetMs) why = `it used ${seconds} of CPU without becoming ready`;
        else if (now - movedAt >= budgetMs) why = `it made no progress for ${seconds}`;
      }
      if (why === undefined) return;
      clearInterval(timer);
      stop(why);
    },
    Math.max(10, Math.min(START_POLL_MS, budgetMs / 4)),
  );
  timer.unref?.();
  return timer;
}

/** Below this much available memory (what one interpreter needs to start), the machine is out of memory. */
const LOW_MEMORY_BYTES = 256 * 1024 * 1024;

/** True when the kernel reports less memory available than an interpreter needs (Linux; else false). */
export function machineOutOfMemory(): boolean {
  try {
    const line = readFileSync("/proc/meminfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("MemAvailable:"));
    return line !== undefined && Number.parseInt(line.slice(13), 10) * 1024 < LOW_MEMORY_BYTES;
  } catch {
    return false;
  }
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
