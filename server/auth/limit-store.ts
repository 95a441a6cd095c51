/**
 * The SQL of attempt limits (`auth_limit_hits`): sliding windows kept in the app's database, so a restart
 * keeps them and several instances on one database share them.
 *
 * `reserve` checks and records in one write transaction taken up front (BEGIN IMMEDIATE), so two callers
 * (two requests of this process, or two processes) can never both see the last free slot: the attempt is
 * counted before the work it guards starts, not after. A reservation covers several windows at once
 * (a sign-in's client address and account): all of them, or none.
 */
import type { Clock } from "../lib/clock.ts";
import type { Store } from "../storage/store.ts";

/** One window's subject: the key (limit name and subject) and the window's size. */
export interface LimitKey {
  key: string;
  limit: number;
  windowMs: number;
}

export type Reservation = { ok: true; ids: number[] } | { ok: false; retryAfterSeconds: number };

/** How often expired rows of every key are swept (a key nobody uses again is otherwise never read). */
const SWEEP_EVERY_MS = 60_000;

export class LimitStore {
  private lastSweep = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock = Date.now,
  ) {}

  /** Counts one attempt under every key, or under none when any window is full (then: how long to wait). */
  reserve(keys: LimitKey[]): Reservation {
    return this.store.db
      .transaction((): Reservation => {
        const now = this.clock();
        this.sweep(now);
        const wait = this.waitAt(keys, now);
        if (wait > 0) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) };
        const ids = keys.map(
          ({ key, windowMs }) =>
            this.store.run("INSERT INTO auth_limit_hits (key, at, expires_at) VALUES (?, ?, ?)", [
              key,
              now,
              now + windowMs,
            ]).lastInsertRowid,
        );
        return { ok: true, ids };
      })
      .immediate();
  }

  /**
   * Seconds until a slot of every key is free, or 0 when one is free now; records nothing. For checks
   * made in the same synchronous step as the attempt they guard (bearer tokens: bearer-guesses.ts).
   */
  retryAfter(keys: LimitKey[]): number {
    const wait = this.waitAt(keys, this.clock());
    return wait > 0 ? Math.max(1, Math.ceil(wait / 1000)) : 0;
  }

  private waitAt(keys: LimitKey[], now: number): number {
    let wait = 0;
    for (const { key, limit, windowMs } of keys) {
      // The limit-th newest attempt still in the window: while it exists the window is full, and a
      // slot frees when it leaves.
      const full = this.store.get<{ at: number }>(
        "SELECT at FROM auth_limit_hits WHERE key = ? AND at > ? ORDER BY at DESC LIMIT 1 OFFSET ?",
        [key, now - windowMs, limit - 1],
      );
      if (full) wait = Math.max(wait, full.at + windowMs - now);
    }
    return wait;
  }

  /** Gives reserved attempts back (they did not happen, or they should not count). */
  release(ids: number[]): void {
    for (const id of ids) this.store.run("DELETE FROM auth_limit_hits WHERE id = ?", [id]);
  }

  /** Forgets every attempt of a key (a successful sign-in clears its account's failures). */
  clear(key: string): void {
    this.store.run("DELETE FROM auth_limit_hits WHERE key = ?", [key]);
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    this.store.run("DELETE FROM auth_limit_hits WHERE expires_at <= ?", [now]);
  }
}
