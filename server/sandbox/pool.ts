/**
 * The shared sandbox: detects the isolation once, keeps a few interpreters warm so a turn never waits
 * for a cold start when one is free, and hands each turn (and each child run) a fresh interpreter of its
 * own. Interpreters are never reused across turns: Python state belongs to one turn.
 *
 * The pool has a ceiling: at most `max` interpreters are alive at once, warm ones included, so a burst of
 * turns cannot start a pyodide per turn and exhaust memory. A turn beyond the ceiling waits in line (FIFO;
 * it is told its place while it waits) up to its queue deadline. Child runs wait in a line of their own
 * that is served first, and when child runs are possible one slot is kept from turns: a turn waiting for
 * its child can then never hold the last slot the child needs.
 */
import { availableParallelism, totalmem } from "node:os";
import { resolve } from "node:path";
import { type Confinement, confinementFor } from "./confinement.ts";
import { Interpreter, SandboxKilled } from "./interpreter.ts";
import { detectIsolation, type Isolation, sandboxCommand } from "./isolation.ts";
import { DEFAULT_LIMITS, type SandboxLimits } from "./limits.ts";

const REFILL_DELAY_MS = 250;
/** What one ready pyodide interpreter costs, measured here (~175 MB RSS), with headroom. */
const INTERPRETER_BYTES = 256 * 1024 * 1024;

/** Two interpreters per core (most of a turn waits on the model), within a quarter of the memory. */
export function defaultMaxInterpreters(cores = availableParallelism(), memory = totalmem()): number {
  return Math.max(2, Math.min(2 * cores, Math.floor(memory / 4 / INTERPRETER_BYTES)));
}

export interface SandboxOptions {
  /** Interpreters kept started and ready (default 1, never more than the ceiling). */
  warm?: number;
  /** Most interpreters alive at once; default: defaultMaxInterpreters(). */
  max?: number;
  /** Slots turns may not take, for child runs (1 when child runs are enabled). */
  reservedForChildren?: number;
  /** An interpreter not ready within this time is killed and replaced (default 25 s). */
  startTimeoutMs?: number;
  /** Forces an isolation (tests of the "none" path); default: detected. */
  isolation?: Isolation;
  /** Paths the jail must never show (the data dir when it lies inside the checkout). */
  keepOut?: string[];
  /** The sandbox command line (tests start a process that never gets ready); default: the jail's. */
  command?: string[];
  /** Limits of each interpreter (policy `[sandbox]`); default: the committed policy's. */
  limits?: SandboxLimits;
}

export interface AcquireOptions {
  /** A child run: served before turns, and may use the slots kept for children. */
  child?: boolean;
  /** Gives up waiting in line (rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Longest time in line; then SandboxQueueTimeout. Default: no limit. */
  queueTimeoutMs?: number;
  /**
   * Told how many are ahead (0: next) when the wait starts and each time the line moves, and
   * `undefined` when it leaves the line (served or given up). Never called when no wait was needed.
   */
  onQueue?: (ahead: number | undefined) => void;
  /** Told when the interpreter it gets is still starting (pyodide loading: seconds). */
  onStarting?: () => void;
}

/** No interpreter became free within the queue deadline. */
export class SandboxQueueTimeout extends Error {
  override name = "SandboxQueueTimeout";
  constructor(readonly waitedMs: number) {
    super(`No sandbox became free within ${Math.round(waitedMs / 1000)} s`);
  }
}

interface Waiter {
  child: boolean;
  grant(interpreter: Interpreter): void;
  fail(error: unknown): void;
  onQueue?: (ahead: number | undefined) => void;
  lastAhead?: number;
}

export class SandboxPool {
  readonly isolation: Isolation;
  readonly max: number;
  private readonly command: string[];
  private readonly confinement: Confinement;
  private readonly warmTarget: number;
  private readonly turnSlots: number;
  private readonly startTimeoutMs: number;
  /** Started, not handed out: the warm interpreters (ready or still starting). */
  private readonly idle: Interpreter[] = [];
  /** Every interpreter alive and counted against the ceiling (idle and handed out). */
  private readonly live = new Set<Interpreter>();
  /** Handed out to turns (not children): limited to `turnSlots`. */
  private readonly turnHeld = new Set<Interpreter>();
  private readonly waiting: Waiter[] = [];
  private closed = false;
  private refillTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: SandboxOptions = {}) {
    this.isolation = options.isolation ?? detectIsolation();
    const limits = options.limits ?? DEFAULT_LIMITS;
    this.command =
      options.command ??
      sandboxCommand(
        this.isolation,
        (options.keepOut ?? []).map((p) => resolve(p)),
        limits,
      );
    this.confinement = confinementFor(this.isolation, limits);
    this.max = Math.max(1, options.max ?? defaultMaxInterpreters());
    this.turnSlots = Math.max(1, this.max - (options.reservedForChildren ?? 0));
    this.warmTarget = Math.min(options.warm ?? 1, this.max);
    this.startTimeoutMs = options.startTimeoutMs ?? 25_000;
  }

  /** Starts the warm interpreters; resolves when they are ready (or failed). */
  async warm(): Promise<void> {
    this.refill();
    await Promise.allSettled(this.idle.map((i) => i.ready));
  }

  /**
   * A ready interpreter for one turn or child run: a warm one when free, else a cold start, else a
   * place in line. Rejects with SandboxKilled("start_timeout") when the interpreter never gets ready.
   */
  async acquire(options: AcquireOptions = {}): Promise<Interpreter> {
    if (this.closed) throw new Error("the sandbox is shut down");
    const child = options.child === true;
    const interpreter = this.take(child, false) ?? (await this.wait(child, options));
    if (!interpreter.isReady) options.onStarting?.();
    return this.whenReady(interpreter);
  }

  /** Stops an interpreter after its turn; its slot goes to the next in line. */
  release(interpreter: Interpreter): void {
    interpreter.kill();
    this.forget(interpreter);
    this.pump();
  }

  /**
   * Swaps a turn's interpreter for a fresh one in the same slot (after a step was killed at its time
   * limit): the turn keeps its place instead of joining the line again.
   */
  async replace(old: Interpreter): Promise<Interpreter> {
    old.kill();
    const wasTurn = this.turnHeld.has(old);
    this.forget(old);
    if (this.closed) throw new Error("the sandbox is shut down");
    const fresh = this.spawn();
    if (wasTurn) this.turnHeld.add(fresh);
    return this.whenReady(fresh);
  }

  /** Warm interpreters ready to hand out right now. */
  get readyCount(): number {
    return this.idle.filter((i) => i.isReady && i.alive).length;
  }

  /** Counts for health and benchmarks. */
  stats() {
    return { max: this.max, live: this.live.size, idle: this.idle.length, waiting: this.waiting.length };
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.refillTimer);
    for (const interpreter of this.live) interpreter.kill();
    this.live.clear();
    this.turnHeld.clear();
    this.idle.length = 0;
    for (const waiter of this.waiting.splice(0)) waiter.fail(new Error("the sandbox is shut down"));
    this.confinement.close();
  }

  /**
   * An interpreter for this caller now, or undefined when it must wait. A newcomer (`fromLine` false)
   * never overtakes those already in line.
   */
  private take(child: boolean, fromLine: boolean): Interpreter | undefined {
    if (!fromLine && this.waiting.some((w) => child === w.child || !child)) return undefined;
    if (!child && this.turnHeld.size >= this.turnSlots) return undefined;
    // Prefer a ready warm interpreter, then one still starting, then a cold start within the ceiling.
    this.idle.sort((a, b) => Number(b.isReady) - Number(a.isReady));
    let interpreter: Interpreter | undefined;
    while (this.idle.length > 0 && !interpreter) {
      const candidate = this.idle.shift() as Interpreter;
      if (candidate.alive) interpreter = candidate;
      else this.forget(candidate);
    }
    if (!interpreter && this.live.size < this.max) interpreter = this.spawn();
    if (!interpreter) return undefined;
    if (!child) this.turnHeld.add(interpreter);
    // Start the replacement a moment after this one is ready, so the two start-ups (CPU-bound) do not
    // compete, nor the replacement with this turn's first steps.
    if (interpreter.isReady) this.scheduleRefill();
    else
      void interpreter.ready.then(
        () => this.scheduleRefill(),
        () => this.scheduleRefill(),
      );
    return interpreter;
  }

  private wait(child: boolean, options: AcquireOptions): Promise<Interpreter> {
    return new Promise<Interpreter>((resolvePromise, rejectPromise) => {
      const started = performance.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        const at = this.waiting.indexOf(waiter);
        if (at !== -1) this.waiting.splice(at, 1);
        options.onQueue?.(undefined);
      };
      const waiter: Waiter = {
        child,
        onQueue: options.onQueue,
        grant: (interpreter) => {
          done();
          resolvePromise(interpreter);
        },
        fail: (error) => {
          done();
          rejectPromise(error);
          this.tellPlaces();
        },
      };
      const onAbort = () => waiter.fail(options.signal?.reason ?? new Error("aborted"));
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener("abort", onAbort, { once: true });
      if (options.queueTimeoutMs !== undefined) {
        timer = setTimeout(
          () => waiter.fail(new SandboxQueueTimeout(performance.now() - started)),
          options.queueTimeoutMs,
        );
      }
      // Children go ahead of every turn, behind earlier children.
      const firstTurn = this.waiting.findIndex((w) => !w.child);
      if (child && firstTurn !== -1) this.waiting.splice(firstTurn, 0, waiter);
      else this.waiting.push(waiter);
      this.tellPlaces();
    });
  }

  /** Hands free slots to the line, in order, then tops up the warm interpreters. */
  private pump(): void {
    if (this.closed) return;
    for (let i = 0; i < this.waiting.length; ) {
      const waiter = this.waiting[i] as Waiter;
      this.waiting.splice(i, 1);
      const interpreter = this.take(waiter.child, true);
      if (interpreter) {
        waiter.grant(interpreter);
        continue;
      }
      // Not yet: it keeps its place (a turn that cannot go blocks the turns behind it: first come, first served).
      this.waiting.splice(i, 0, waiter);
      i++;
    }
    this.tellPlaces();
    this.scheduleRefill();
  }

  private tellPlaces(): void {
    let ahead = 0;
    for (const waiter of this.waiting) {
      if (waiter.lastAhead !== ahead) {
        waiter.lastAhead = ahead;
        waiter.onQueue?.(ahead);
      }
      ahead++;
    }
  }

  private async whenReady(interpreter: Interpreter): Promise<Interpreter> {
    try {
      await interpreter.ready;
      return interpreter;
    } catch (error) {
      // Never ready (start deadline) or died while starting: free its slot and report it.
      this.release(interpreter);
      throw error instanceof SandboxKilled ? error : new SandboxKilled("exited");
    }
  }

  private spawn(): Interpreter {
    const interpreter = new Interpreter(this.command, {
      startTimeoutMs: this.startTimeoutMs,
      confinement: this.confinement,
    });
    this.live.add(interpreter);
    // A warm interpreter that dies or never gets ready frees its slot, and a replacement starts.
    void interpreter.ready.catch(() => {
      const at = this.idle.indexOf(interpreter);
      if (at === -1) return;
      this.idle.splice(at, 1);
      this.forget(interpreter);
      this.pump();
    });
    return interpreter;
  }

  private forget(interpreter: Interpreter): void {
    this.live.delete(interpreter);
    this.turnHeld.delete(interpreter);
  }

  private scheduleRefill(): void {
    if (this.refillTimer || this.closed) return;
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined;
      this.refill();
    }, REFILL_DELAY_MS);
  }

  private refill(): void {
    if (this.closed || this.waiting.length > 0) return;
    while (this.idle.length < this.warmTarget && this.live.size < this.max) this.idle.push(this.spawn());
  }
}
