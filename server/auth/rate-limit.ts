/**
 * A sliding-window counter per key (in memory, per process): how many events a key had in the last
 * window, and how long until the oldest one leaves it. Used for sign-in attempts and workspace reindexes.
 */
import type { Clock } from "../lib/clock.ts";

export class SlidingWindow {
  private readonly hits = new Map<string, number[]>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly clock: Clock = Date.now,
  ) {}

  private recent(key: string): number[] {
    const since = this.clock() - this.windowMs;
    const kept = (this.hits.get(key) ?? []).filter((at) => at > since);
    if (kept.length === 0) this.hits.delete(key);
    else this.hits.set(key, kept);
    return kept;
  }

  /** Seconds until `key` may act again, or 0 when it is under the limit now. */
  retryAfter(key: string): number {
    const recent = this.recent(key);
    if (recent.length < this.limit) return 0;
    const oldest = recent[recent.length - this.limit] as number;
    return Math.max(1, Math.ceil((oldest + this.windowMs - this.clock()) / 1000));
  }

  record(key: string): void {
    const recent = this.recent(key);
    recent.push(this.clock());
    this.hits.set(key, recent);
    // Bounded memory: a flood of distinct keys (addresses, emails) forgets the oldest keys first.
    if (this.hits.size > 50_000) {
      const first = this.hits.keys().next().value;
      if (first !== undefined) this.hits.delete(first);
    }
  }

  reset(key: string): void {
    this.hits.delete(key);
  }
}
