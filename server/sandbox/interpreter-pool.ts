/**
 * The shared sandbox: detects the isolation once, keeps interpreters warm so a turn never waits for a
 * start when one is free (as many as recent demand asks for: warm-demand.ts), and hands each turn (and
 * each child run) a fresh interpreter of its own. Interpreters are never reused across turns: Python
 * state belongs to one turn. Interpreters start from the memory snapshot (snapshot.ts) when the pool has
 * a cache folder for it, and a start that fails (it exited, or passed its CPU-time deadline) is tried
 * once more before the caller hears of it.
 *
 * The pool has a ceiling: at most `max` interpreters are alive at once, warm ones included, so a burst of
 * turns cannot start a pyodide per turn and exhaust memory. A turn beyond the ceiling waits in line (it
 * is told its place while it waits) up to its queue deadline. The line is fair between owners: round
 * robin, each owner's turns in the order they came, so one user's burst of turns waits behind another
 * user's single turn instead of in front of it. Child runs wait in a line of their own that is served
 * first, and when child runs are possible one slot is kept from turns: a turn waiting for its child can
 * then never hold the last slot the child needs.
 *
 * Started by root, each live interpreter runs as a host uid of its own (a slot of uids.ts), never shared
 * with another interpreter or a user's sandbox at the same time; slots are handed out in turn, so a uid
 * is reused as late as possible.
 */
import { availableParallelism, totalmem } from "node:os";
import { resolve } from "node:path";
import { type Confinement, confinementFor } from "./confinement.ts";
import { FairLine, type JoinOptions } from "./fair-line.ts";
import { Interpreter, SandboxKilled } from "./interpreter.ts";
import {
  detectIsolation,
  detectSandbox,
  type Isolation,
  pyodideVersion,
  type SandboxCommandOptions,
  sandboxCommand,
} from "./isolation.ts";
import { DEFAULT_LIMITS, type SandboxLimits } from "./limits.ts";
import { makeSnapshot, PoolSnapshot, SnapshotCache, type SnapshotLog } from "./snapshot.ts";
import { assertUidRange, DEFAULT_UID_BASE, INTERPRETER_UIDS, interpreterUid } from "./uids.ts";
import { WarmDemand } from "./warm-demand.ts";

const REFILL_DELAY_MS = 250;
/** What one ready pyodide interpreter costs, measured here (~175 MB RSS), with headroom. */
const INTERPRETER_BYTES = 256 * 1024 * 1024;

/** Two interpreters per core (most of a turn waits on the model), within a quarter of the memory. */
export function defaultMaxInterpreters(cores = availableParallelism(), memory = totalmem()): number {
  return Math.max(2, Math.min(2 * cores, Math.floor(memory / 4 / INTERPRETER_BYTES)));
}

export interface InterpreterPoolOptions {
  /** Interpreters kept started and ready while no one is active (default 1, never more than the ceiling). */
  warm?: number;
  /** Kept warm in addition for each owner active within `warmActiveMs` (default 0). */
  warmPerOwner?: number;
  /** How long after starting a turn an owner counts as active (default 10 minutes). */
  warmActiveMs?: number;
  /** Most interpreters alive at once; default: defaultMaxInterpreters(). */
  max?: number;
  /** Slots turns may not take, for child runs (1 when child runs are enabled). */
  reservedForChildren?: number;
  /**
   * The start deadline (default 25 s): an interpreter that used this much CPU without becoming ready,
   * or whose CPU time stood still this long, is killed and started again once.
   */
  startTimeoutMs?: number;
  /** The folder the interpreters' memory snapshot is cached in; none: every start loads pyodide. */
  snapshotDir?: string;
  /** Hears what happens to the snapshot (made, refused). */
  log?: SnapshotLog;
  /** Forces an isolation (tests of the "none" path); default: detected. */
  isolation?: Isolation;
  /** Paths the jail must never show (the data dir when it lies inside the checkout). */
  keepOut?: string[];
  /** The sandbox command line (tests start a process that never gets ready); default: the jail's. */
  command?: string[];
  /** Limits of each interpreter (policy `[sandbox]`); default: the committed policy's. */
  limits?: SandboxLimits;
  /** First of the host uids sandboxes run as when the server is root (policy sandbox.uid_base). */
  uidBase?: number;
}

/** How a caller waits (JoinOptions: its signal, queue deadline and place in line) and what it is. */
export interface AcquireOptions extends JoinOptions {
  /** A child run: served before turns, and may use the slots kept for children. */
  child?: boolean;
  /** Whose turn: the line takes owners in turn (round robin). Default: one anonymous owner. */
  owner?: string;
  /** Told when the interpreter it gets is still starting (pyodide loading: seconds). */
  onStarting?: () => void;
}

export class InterpreterPool {
  readonly isolation: Isolation;
  readonly max: number;
  /** The command of a sandbox in uid slot `slot` (the slot is ignored where no uid is dropped to). */
  private readonly command: (slot: number, options?: SandboxCommandOptions) => string[];
  private readonly confinement: Confinement;
  private readonly demand: WarmDemand;
  /** The snapshot interpreters start from; undefined: each loads pyodide (a test's fixed command too). */
  private readonly snapshot: PoolSnapshot | undefined;
  private readonly turnSlots: number;
  private readonly startTimeoutMs: number;
  /** Started, not handed out: the warm interpreters (ready or still starting). */
  private readonly idle: Interpreter[] = [];
  /** Every interpreter alive and counted against the ceiling (idle and handed out). */
  private readonly live = new Set<Interpreter>();
  /** Handed out to turns (not children): limited to `turnSlots`. */
  private readonly turnHeld = new Set<Interpreter>();
  /** Whose turn each handed-out interpreter serves (warm-demand counts from its release too). */
  private readonly turnOwners = new Map<Interpreter, string>();
  /** Turns and child runs waiting for a slot, in the order they are served (fair-line.ts). */
  private readonly line = new FairLine<Interpreter>();
  /** uid slots of live (or not yet reaped) interpreters, and the next slot to try. */
  private readonly slots = new Map<Interpreter, number>();
  private readonly slotsInUse = new Set<number>();
  private nextSlot = 0;
  /** Snapshot makers running: each is a pyodide of its own, counted against the ceiling. */
  private making = 0;
  private closed = false;
  /** Aborted by close(): a snapshot maker still running is killed with the pool. */
  private readonly closing = new AbortController();
  /** The running snapshot maker's process id, for tests (undefined when none runs). */
  snapshotMakerPid: number | undefined;
  private refillTimer: ReturnType<typeof setTimeout> | undefined;
  private trimTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: InterpreterPoolOptions = {}) {
    this.isolation = options.isolation ?? detectIsolation();
    const limits = options.limits ?? DEFAULT_LIMITS;
    const keepOut = (options.keepOut ?? []).map((p) => resolve(p));
    const base = options.uidBase ?? DEFAULT_UID_BASE;
    const dropsUid = !options.command && this.isolation === "bubblewrap" && !!detectSandbox().plan?.dropTo;
    if (dropsUid) assertUidRange(base);
    const fixed = options.command;
    this.command = (slot, more = {}) =>
      fixed ??
      sandboxCommand(this.isolation, keepOut, limits, {
        ...more,
        ...(dropsUid ? { uid: interpreterUid(base, slot) } : {}),
      });
    this.confinement = confinementFor(this.isolation, limits);
    this.max = Math.max(1, options.max ?? defaultMaxInterpreters());
    this.turnSlots = Math.max(1, this.max - (options.reservedForChildren ?? 0));
    this.demand = new WarmDemand({
      base: options.warm ?? 1,
      perOwner: options.warmPerOwner ?? 0,
      activeMs: options.warmActiveMs ?? 600_000,
    });
    this.startTimeoutMs = options.startTimeoutMs ?? 25_000;
    if (options.snapshotDir && !fixed) {
      const cache = new SnapshotCache(options.snapshotDir, pyodideVersion());
      this.snapshot = new PoolSnapshot(cache, () => this.makeSnapshot(), options.log);
    }
  }

  /** Starts the warm interpreters (the snapshot first); resolves when they are ready (or failed). */
  async warm(): Promise<void> {
    await this.snapshot?.ready();
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
    if (!child) this.touch(options.owner ?? "");
    if (this.snapshot && !this.snapshot.check()) {
      // A pool without a checked snapshot waits for it to be found or made (a start's time).
      options.onStarting?.();
      await this.snapshot.ready();
      if (this.closed) throw new Error("the sandbox is shut down");
    }
    const interpreter =
      this.take(child, false) ?? (await this.line.join(child, options.owner ?? "", options));
    if (!interpreter.isReady) options.onStarting?.();
    const ready = await this.whenReady(interpreter);
    if (!child) this.turnOwners.set(ready, options.owner ?? "");
    return ready;
  }

  /** Stops an interpreter after its turn; its slot goes to the next in line. */
  release(interpreter: Interpreter): void {
    // The owner counts as active from the end of their turn too: a long turn does not make them idle.
    const owner = this.turnOwners.get(interpreter);
    if (owner !== undefined) this.touch(owner);
    interpreter.kill();
    this.forget(interpreter);
    this.pump();
  }

  /**
   * Swaps a turn's interpreter for a fresh one in the same slot (after a step was killed at its time
   * limit): the turn keeps its place instead of joining the line again.
   */
  async replace(old: Interpreter): Promise<Interpreter> {
    const owner = this.turnOwners.get(old);
    const fresh = await this.whenReady(this.respawn(old));
    if (owner !== undefined) this.turnOwners.set(fresh, owner);
    return fresh;
  }

  /** Warm interpreters ready to hand out right now. */
  get readyCount(): number {
    return this.idle.filter((i) => i.isReady && i.alive).length;
  }

  /** The spawned process of each interpreter serving a turn now (diagnostics: which sandbox runs it). */
  get turnPids(): number[] {
    return [...this.turnHeld].map((i) => i.pid);
  }

  /** Counts for health and benchmarks. */
  stats() {
    return { max: this.max, live: this.alive, idle: this.idle.length, waiting: this.line.length };
  }

  close(): void {
    this.closed = true;
    this.closing.abort();
    clearTimeout(this.refillTimer);
    clearTimeout(this.trimTimer);
    for (const interpreter of this.live) interpreter.kill();
    this.live.clear();
    this.turnHeld.clear();
    this.turnOwners.clear();
    this.idle.length = 0;
    this.line.failAll(new Error("the sandbox is shut down"));
    this.snapshot?.close();
    this.confinement.close();
  }

  /**
   * An interpreter for this caller now, or undefined when it must wait. A newcomer (`fromLine` false)
   * never overtakes those already in line.
   */
  private take(child: boolean, fromLine: boolean): Interpreter | undefined {
    if (!fromLine && this.line.blocks(child)) return undefined;
    if (!child && this.turnHeld.size >= this.turnSlots) return undefined;
    // Prefer a ready warm interpreter, then one still starting, then a cold start within the ceiling.
    this.idle.sort((a, b) => Number(b.isReady) - Number(a.isReady));
    let interpreter: Interpreter | undefined;
    while (this.idle.length > 0 && !interpreter) {
      const candidate = this.idle.shift() as Interpreter;
      if (candidate.alive) interpreter = candidate;
      else this.forget(candidate);
    }
    if (!interpreter && this.alive < this.max) interpreter = this.spawn();
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

  /** Hands free slots to the line, in its order, then tops up the warm interpreters. */
  private pump(): void {
    if (this.closed) return;
    let granted = true;
    while (granted) {
      granted = false;
      for (const waiter of this.line.order()) {
        // A turn that cannot go blocks the turns behind it (the slots they need are the same).
        const interpreter = this.take(waiter.child, true);
        if (!interpreter) continue;
        waiter.grant(interpreter);
        granted = true;
        break;
      }
    }
    this.line.tellPlaces();
    this.scheduleRefill();
  }

  /**
   * The interpreter once ready. One that is never ready (its start deadline) or dies while starting is
   * started again once in its place (a start that fails on a busy machine rarely fails twice); the second
   * failure frees its slot and is reported.
   */
  private async whenReady(interpreter: Interpreter, retries = 1): Promise<Interpreter> {
    try {
      await interpreter.ready;
      return interpreter;
    } catch (error) {
      if (retries > 0 && !this.closed) return this.whenReady(this.respawn(interpreter), retries - 1);
      this.release(interpreter);
      throw error instanceof SandboxKilled ? error : new SandboxKilled("exited");
    }
  }

  /** Stops `old` and starts a fresh interpreter in its place (a turn's keeps counting as the turn's). */
  private respawn(old: Interpreter): Interpreter {
    old.kill();
    const wasTurn = this.turnHeld.has(old);
    this.forget(old);
    if (this.closed) throw new Error("the sandbox is shut down");
    const fresh = this.spawn();
    if (wasTurn) this.turnHeld.add(fresh);
    return fresh;
  }

  /** Sandboxes alive, counted against the ceiling: interpreters and snapshot makers. */
  private get alive(): number {
    return this.live.size + this.making;
  }

  /**
   * Makes the snapshot in a sandbox of its own (a uid slot held meanwhile), as an interpreter starts;
   * it counts as a live sandbox while it runs (it is a pyodide's memory).
   */
  private async makeSnapshot(): Promise<Uint8Array> {
    const slot = this.freeSlot();
    this.slotsInUse.add(slot);
    this.making++;
    try {
      const command = this.command(slot, { makeSnapshot: true });
      return await makeSnapshot(command, {
        startTimeoutMs: this.startTimeoutMs,
        confinement: this.confinement,
        signal: this.closing.signal,
        spawned: (pid) => {
          this.snapshotMakerPid = pid;
        },
      });
    } finally {
      this.snapshotMakerPid = undefined;
      this.making--;
      this.slotsInUse.delete(slot);
    }
  }

  private spawn(): Interpreter {
    const slot = this.freeSlot();
    const snapshot = this.snapshot?.current();
    const interpreter = new Interpreter(this.command(slot, { snapshot: snapshot !== undefined }), {
      startTimeoutMs: this.startTimeoutMs,
      confinement: this.confinement,
      ...(snapshot === undefined ? {} : { snapshotFd: snapshot }),
    });
    // pyodide refusing the snapshot (it started from scratch instead): later starts do not try it again.
    if (snapshot)
      void interpreter.ready.then(
        () => interpreter.startStats?.snapshot === false && this.snapshot?.refused(),
        () => {},
      );
    // The uid stays taken until the process is gone, not only killed.
    this.slots.set(interpreter, slot);
    this.slotsInUse.add(slot);
    void interpreter.whenExited().then(() => {
      this.slots.delete(interpreter);
      this.slotsInUse.delete(slot);
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

  /** The next uid slot no interpreter holds, in turn from the last one handed out. */
  private freeSlot(): number {
    for (let tried = 0; tried < INTERPRETER_UIDS; tried++) {
      const slot = this.nextSlot;
      this.nextSlot = (this.nextSlot + 1) % INTERPRETER_UIDS;
      if (!this.slotsInUse.has(slot)) return slot;
    }
    // Unreachable while max ≤ 1024 (the policy's bound): every slot held means 4032 processes not reaped.
    throw new Error("no interpreter uid is free");
  }

  private forget(interpreter: Interpreter): void {
    this.live.delete(interpreter);
    this.turnHeld.delete(interpreter);
    this.turnOwners.delete(interpreter);
  }

  private scheduleRefill(): void {
    if (this.refillTimer || this.closed) return;
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined;
      this.refill();
    }, REFILL_DELAY_MS);
  }

  private refill(): void {
    if (this.closed || this.line.length > 0) return;
    // Until the snapshot is known, starts wait for it (a start from scratch would compete with its making).
    if (this.snapshot && !this.snapshot.check()) {
      void this.snapshot.ready().then(() => this.refill());
      return;
    }
    // One warm start at a time (each is CPU-bound): the next begins once this one is ready, so warming
    // several does not take the CPU from the turns running meanwhile.
    if (this.idle.some((i) => !i.isReady && i.alive)) return;
    if (this.idle.length >= this.demand.target(this.max) || this.alive >= this.max) return;
    const warm = this.spawn();
    this.idle.push(warm);
    void warm.ready.then(
      () => this.scheduleRefill(),
      () => {},
    );
  }

  /** An owner started a turn: the warm target follows (and falls back when the owner stops counting). */
  private touch(owner: string): void {
    this.demand.touch(owner);
    this.scheduleTrim();
  }

  /** Stops warm interpreters beyond the target once demand has fallen (an owner no longer active). */
  private scheduleTrim(): void {
    clearTimeout(this.trimTimer);
    const inMs = this.demand.nextChangeMs();
    if (inMs === undefined || this.closed) return;
    this.trimTimer = setTimeout(() => {
      const target = this.demand.target(this.max);
      while (this.idle.length > target) {
        const surplus = this.idle.pop() as Interpreter;
        surplus.kill();
        this.forget(surplus);
      }
      this.pump();
      this.scheduleTrim();
    }, inMs);
    this.trimTimer.unref?.();
  }
}
