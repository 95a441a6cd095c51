/**
 * A run executing in this process: its events in order (the log follows in batches: turn-recorder.ts), the
 * readers following it, and the controller that cancels it. A reader that attaches late (a retry of the
 * same Idempotency-Key while the turn still runs) first gets what was emitted, then follows live.
 */
import { TERMINAL_TYPES, type TurnEvent } from "./events.ts";

export class LiveRun {
  readonly events: TurnEvent[] = [];
  readonly controller = new AbortController();
  private wake: (() => void)[] = [];
  finished = false;

  constructor(
    readonly id: string,
    readonly ownerId: string,
    readonly sessionId: string,
  ) {}

  push(event: TurnEvent): void {
    if (this.finished) return;
    this.events.push(event);
    if (TERMINAL_TYPES.has(event.type)) this.finished = true;
    for (const wake of this.wake.splice(0)) wake();
  }

  /** Every event from the first, then live ones, until the terminal event (or `signal` aborts). */
  async *follow(signal: AbortSignal): AsyncGenerator<TurnEvent> {
    let index = 0;
    for (;;) {
      while (index < this.events.length) yield this.events[index++] as TurnEvent;
      if (this.finished || signal.aborted) return;
      await new Promise<void>((resolve) => {
        this.wake.push(resolve);
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
    }
  }
}

/** The runs executing in this process, by id. */
export class LiveRuns {
  private readonly runs = new Map<string, LiveRun>();

  add(run: LiveRun): void {
    this.runs.set(run.id, run);
  }

  get(id: string): LiveRun | undefined {
    return this.runs.get(id);
  }

  remove(id: string): void {
    this.runs.delete(id);
    if (this.runs.size === 0) for (const wake of this.emptied.splice(0)) wake();
  }

  private readonly emptied: (() => void)[] = [];

  /** Resolves when no run is executing any more, or after `timeoutMs`. */
  settled(timeoutMs: number): Promise<void> {
    if (this.runs.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.emptied.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  all(): LiveRun[] {
    return [...this.runs.values()];
  }
}
