/**
 * The line turns and child runs wait in when the interpreter pool is at its ceiling. Child runs are
 * served first, as they came; turns round robin between owners, each owner's turns in the order they
 * came, so one user's burst waits behind another user's single turn instead of in front of it. Each
 * waiter is told its place when it joins and whenever the line moves. The pool decides when a slot is
 * free (`order()` then `grant`); the line only keeps the order, the deadlines and the places.
 */

/** No interpreter became free within the queue deadline. */
export class InterpreterQueueTimeout extends Error {
  override name = "InterpreterQueueTimeout";
  constructor(readonly waitedMs: number) {
    super(`No sandbox became free within ${Math.round(waitedMs / 1000)} s`);
  }
}

export interface Waiter<T> {
  child: boolean;
  owner: string;
  grant(value: T): void;
  fail(error: unknown): void;
  onQueue?: (ahead: number | undefined) => void;
  lastAhead?: number;
}

export interface JoinOptions {
  /** Gives up waiting (rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Longest time in line; then InterpreterQueueTimeout. Default: no limit. */
  queueTimeoutMs?: number;
  /** Told how many are ahead (0: next) as the line moves, and `undefined` once it leaves the line. */
  onQueue?: (ahead: number | undefined) => void;
}

export class FairLine<T> {
  /** Waiters in the order they came; `order()` is the order they are served in. */
  private readonly waiting: Waiter<T>[] = [];
  /** Owners with turns in line, the next to be served first. */
  private rotation: string[] = [];

  get length(): number {
    return this.waiting.length;
  }

  /** Whether a newcomer would overtake someone: a child waits behind children, a turn behind anyone. */
  blocks(child: boolean): boolean {
    return this.waiting.some((w) => child === w.child || !child);
  }

  /** Joins the line; resolves with what `grant` hands over, rejects on the signal or the deadline. */
  join(child: boolean, owner: string, options: JoinOptions = {}): Promise<T> {
    return new Promise<T>((resolvePromise, rejectPromise) => {
      const started = performance.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const leave = (served: boolean) => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        const at = this.waiting.indexOf(waiter);
        if (at !== -1) this.waiting.splice(at, 1);
        if (!child) this.rotate(owner, served);
        options.onQueue?.(undefined);
      };
      const waiter: Waiter<T> = {
        child,
        owner,
        onQueue: options.onQueue,
        grant: (value) => {
          leave(true);
          resolvePromise(value);
        },
        fail: (error) => {
          leave(false);
          rejectPromise(error);
          this.tellPlaces();
        },
      };
      const onAbort = () => waiter.fail(options.signal?.reason ?? new Error("aborted"));
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener("abort", onAbort, { once: true });
      if (options.queueTimeoutMs !== undefined) {
        timer = setTimeout(
          () => waiter.fail(new InterpreterQueueTimeout(performance.now() - started)),
          options.queueTimeoutMs,
        );
      }
      this.waiting.push(waiter);
      if (!child && !this.rotation.includes(owner)) this.rotation.push(owner);
      this.tellPlaces();
    });
  }

  /**
   * The order waiters are served in: children first (as they came), then turns round robin by owner:
   * the first turn of each owner in rotation order, then the second of each, and so on.
   */
  order(): Waiter<T>[] {
    const children = this.waiting.filter((w) => w.child);
    const byOwner = new Map<string, Waiter<T>[]>();
    for (const waiter of this.waiting) {
      if (waiter.child) continue;
      const queue = byOwner.get(waiter.owner) ?? [];
      queue.push(waiter);
      byOwner.set(waiter.owner, queue);
    }
    const turns: Waiter<T>[] = [];
    const count = this.waiting.length - children.length;
    for (let round = 0; turns.length < count; round++) {
      for (const owner of this.rotation) {
        const waiter = byOwner.get(owner)?.[round];
        if (waiter) turns.push(waiter);
      }
    }
    return [...children, ...turns];
  }

  /** Tells each waiter whose place changed how many are ahead of it. */
  tellPlaces(): void {
    let ahead = 0;
    for (const waiter of this.order()) {
      if (waiter.lastAhead !== ahead) {
        waiter.lastAhead = ahead;
        waiter.onQueue?.(ahead);
      }
      ahead++;
    }
  }

  /** Fails everyone in line (the pool is closing). */
  failAll(error: unknown): void {
    for (const waiter of this.waiting.splice(0)) waiter.fail(error);
  }

  /** An owner's turn left the line: served, it goes to the back of the rotation; gone, only if its last. */
  private rotate(owner: string, served: boolean): void {
    const waitingStill = this.waiting.some((w) => !w.child && w.owner === owner);
    if (served || !waitingStill) this.rotation = this.rotation.filter((o) => o !== owner);
    if (served && waitingStill) this.rotation.push(owner);
  }
}
