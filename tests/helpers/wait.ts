/**
 * Polling instead of fixed sleeps: a test waits for the condition it needs, as briefly as the machine
 * allows, and fails with a clear message when it never comes.
 */
import { readFileSync } from "node:fs";

export interface WaitOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Time between checks (default 10 ms). */
  intervalMs?: number;
  /** What is awaited, for the failure message. */
  what?: string;
}

/** Resolves with the first truthy value `check` returns; rejects when the deadline passes. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 10, what = "the condition" }: WaitOptions = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(intervalMs);
  }
}

/** Whether a process is gone (exited and reaped, or a zombie nobody reaped yet). */
export function processGone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return true;
  }
}
