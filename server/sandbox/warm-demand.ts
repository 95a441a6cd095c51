/**
 * How many interpreters the pool keeps warm: `base` while no one is active, and `perOwner` more for each
 * owner who started a turn within the last `activeMs` (up to the pool's ceiling), so that the next turn of
 * someone who is working finds one ready, while an idle server holds only `base` (each warm interpreter is
 * a process of about 200 MB).
 */
export interface WarmPolicy {
  /** Kept warm while no one is active. */
  base: number;
  /** Kept warm in addition for each active owner. */
  perOwner: number;
  /** An owner counts as active for this long after starting a turn. */
  activeMs: number;
}

export class WarmDemand {
  private readonly lastTurn = new Map<string, number>();

  constructor(
    private readonly policy: WarmPolicy,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** `owner` started a turn now. */
  touch(owner: string): void {
    if (this.policy.perOwner > 0) this.lastTurn.set(owner, this.now());
  }

  /** Owners active now; forgets the others. */
  activeOwners(): number {
    const since = this.now() - this.policy.activeMs;
    for (const [owner, at] of this.lastTurn) if (at <= since) this.lastTurn.delete(owner);
    return this.lastTurn.size;
  }

  /** Interpreters to keep warm now, within `max`. */
  target(max: number): number {
    return Math.min(max, this.policy.base + this.policy.perOwner * this.activeOwners());
  }

  /** Milliseconds until the next owner stops counting as active; undefined when none is. */
  nextChangeMs(): number | undefined {
    if (this.activeOwners() === 0) return undefined;
    const oldest = Math.min(...this.lastTurn.values());
    return Math.max(0, oldest + this.policy.activeMs - this.now()) + 1;
  }
}
