/**
 * The shared sandbox: detects the isolation once, keeps a few interpreters warm so a turn never waits
 * for a cold start when one is free, and hands each turn (and each child run) a fresh interpreter of its
 * own. Interpreters are never reused across turns: Python state belongs to one turn.
 */
import { resolve } from "node:path";
import { type Confinement, confinementFor } from "./confinement.ts";
import { Interpreter } from "./interpreter.ts";
import { detectIsolation, type Isolation, sandboxCommand } from "./isolation.ts";
import { DEFAULT_LIMITS, type SandboxLimits } from "./limits.ts";

const REFILL_DELAY_MS = 250;

export interface SandboxOptions {
  /** Interpreters kept started and ready (default 1). */
  warm?: number;
  /** Forces an isolation (tests of the "none" path); default: detected. */
  isolation?: Isolation;
  /** Paths the jail must never show (the data dir when it lies inside the checkout). */
  keepOut?: string[];
  /** Limits of each interpreter (policy `[sandbox]`); default: the committed policy's. */
  limits?: SandboxLimits;
}

export class SandboxPool {
  readonly isolation: Isolation;
  private readonly command: string[];
  private readonly confinement: Confinement;
  private readonly warmTarget: number;
  private readonly idle: Interpreter[] = [];
  private readonly live = new Set<Interpreter>();
  private closed = false;

  constructor(options: SandboxOptions = {}) {
    this.isolation = options.isolation ?? detectIsolation();
    const limits = options.limits ?? DEFAULT_LIMITS;
    this.command = sandboxCommand(
      this.isolation,
      (options.keepOut ?? []).map((p) => resolve(p)),
      limits,
    );
    this.confinement = confinementFor(this.isolation, limits);
    this.warmTarget = options.warm ?? 1;
  }

  /** Starts the warm interpreters; resolves when they are ready (or failed). */
  async warm(): Promise<void> {
    this.refill();
    await Promise.allSettled(this.idle.map((i) => i.ready));
  }

  /** A ready interpreter for one turn: a warm one when free, else a cold start. */
  async acquire(): Promise<Interpreter> {
    if (this.closed) throw new Error("the sandbox is shut down");
    let interpreter: Interpreter | undefined;
    while (this.idle.length > 0 && !interpreter) {
      const candidate = this.idle.shift() as Interpreter;
      if (candidate.alive) interpreter = candidate;
    }
    if (interpreter) {
      // A warm one was free: start its replacement a moment later, so the new process's start-up does
      // not compete with this turn's first round trips.
      setTimeout(() => this.refill(), REFILL_DELAY_MS);
    } else {
      interpreter = this.spawn();
      this.refill();
    }
    await interpreter.ready;
    return interpreter;
  }

  /** Stops an interpreter after its turn. */
  release(interpreter: Interpreter): void {
    interpreter.kill();
    this.live.delete(interpreter);
  }

  /** Warm interpreters ready to hand out right now. */
  get readyCount(): number {
    return this.idle.filter((i) => i.isReady && i.alive).length;
  }

  close(): void {
    this.closed = true;
    for (const interpreter of this.live) interpreter.kill();
    this.live.clear();
    this.idle.length = 0;
    this.confinement.close();
  }

  private spawn(): Interpreter {
    const interpreter = new Interpreter(this.command, this.confinement);
    this.live.add(interpreter);
    interpreter.ready.catch(() => this.live.delete(interpreter));
    return interpreter;
  }

  private refill(): void {
    if (this.closed) return;
    while (this.idle.length < this.warmTarget) this.idle.push(this.spawn());
  }
}
