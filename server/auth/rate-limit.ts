/**
 * A named sliding-window limit (at most `limit` attempts per `windowMs` per subject), counted in the
 * database (limit-store.ts): sign-in attempts per client address and per account, workspace reindexes
 * per user. An attempt is reserved before the work it guards, atomically with the check, so parallel
 * requests cannot all slip under the limit.
 */
import type { LimitKey, LimitStore, Reservation } from "./limit-store.ts";

export class SlidingWindow {
  constructor(
    readonly name: string,
    readonly limit: number,
    readonly windowMs: number,
    private readonly hits: LimitStore,
  ) {}

  /** This window for one subject (an address, an email, an owner id). */
  of(subject: string): LimitKey {
    return { key: `${this.name}:${subject}`, limit: this.limit, windowMs: this.windowMs };
  }

  /** Reserves one attempt of `subject` now, or says how long to wait. */
  reserve(subject: string): Promise<Reservation> {
    return this.hits.reserve([this.of(subject)]);
  }

  /** Forgets the subject's attempts. */
  reset(subject: string): Promise<void> {
    return this.hits.clear(this.of(subject).key);
  }
}
