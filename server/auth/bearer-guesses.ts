/**
 * Guessing bearer tokens counts against the sign-in limit of the client's address (docs/auth.md).
 *
 * Atrium's own bearer tokens (session tokens `<id>.<secret>` and access tokens `atr_…`) are checked by
 * one indexed read and a constant-time compare: cheap to try, so without a limit an address could try
 * millions. A presented token that is not valid counts as one sign-in attempt of the address (the
 * `signin-address` window of session-auth.ts: 20 per 15 minutes); once the window is full, every bearer
 * token from that address is refused with 429 until a slot frees, valid or not, since telling them apart
 * is the guess. The check, the validation and the count of one address run one at a time in this
 * process (a queue per address), so parallel requests cannot all slip past the check before any of them
 * is counted; a valid token costs one read of the window besides its own lookup.
 */
import { AppError } from "../http/errors.ts";
import type { LimitStore } from "./limit-store.ts";
import { SlidingWindow } from "./rate-limit.ts";
import { SIGN_IN_LIMITS } from "./session-auth.ts";

export class BearerGuesses {
  private readonly perAddress: SlidingWindow;
  /** The tail of each address's queue of checks in progress (gone when the queue empties). */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly limits: LimitStore) {
    const { perAddress, windowMs } = SIGN_IN_LIMITS;
    this.perAddress = new SlidingWindow("signin-address", perAddress, windowMs, limits);
  }

  /** Runs `validate` for a token presented from `address`, counting it when it finds nothing. */
  check<T>(address: string | undefined, validate: () => Promise<T | undefined>): Promise<T | undefined> {
    const key = this.perAddress.of(address ?? "unknown");
    const previous = this.queues.get(key.key) ?? Promise.resolve();
    const run = previous.then(async () => {
      const retryAfter = await this.limits.retryAfter([key]);
      if (retryAfter > 0) {
        throw new AppError("rate_limited", "Too many invalid tokens from this address; try again later", {
          headers: { "retry-after": String(retryAfter) },
        });
      }
      const found = await validate();
      if (found === undefined) await this.limits.reserve([key]);
      return found;
    });
    const tail = run.catch(() => {});
    this.queues.set(key.key, tail);
    void tail.then(() => {
      if (this.queues.get(key.key) === tail) this.queues.delete(key.key);
    });
    return run;
  }
}
