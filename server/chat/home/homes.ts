/**
 * Home instances: a user's chat session files (pi session files) and local sandbox belong to one server
 * instance at a time, the holder of the user's `home` lease (server/storage/leases.ts, kind "home", id =
 * the user's id). The first instance that serves the user's chat takes the lease; its heartbeat renews it
 * while it runs; a graceful stop releases it. Any other instance forwards the user's requests to the
 * holder's registered address (routing.ts), and takes the lease over only once the holder let it lapse
 * (crashed, or gone without an address), failing the runs it left marked running. So two instances never
 * write one user's files at once (docs/design.md "Several instances").
 */
import type { LeaseRow, Leases } from "../../storage/leases.ts";
import type { InstanceRegistry } from "./instances.ts";

/** The lease kind of a user's home. */
export const HOME_LEASE = "home";

/** Where a user's work runs: here, at another instance's address, or at one that gave none. */
export type HomePlace = { kind: "here" } | { kind: "there"; origin: string } | { kind: "unaddressed" };

export interface HomesDeps {
  leases: Leases;
  registry: InstanceRegistry;
  /** This instance's id (ctx.instanceId): the holder its leases name. */
  instance: string;
  /** After this instance took a home over from one that let it lapse: fail the runs it left. */
  onTakeover?: (owner: string) => Promise<void>;
  /** When another instance took over a home this one held (this one stalled): stop writing there. */
  onLost?: (owner: string) => Promise<void>;
  /** How often a waiting take-over looks again (default: a tenth of the lease time). */
  pollMs?: number;
}

export class Homes {
  /** The users whose home lease this instance holds (dropped when the heartbeat finds one lost). */
  private readonly mine = new Set<string>();

  constructor(private readonly deps: HomesDeps) {
    deps.leases.onLost((kind, owner) => {
      if (kind !== HOME_LEASE) return;
      this.mine.delete(owner);
      void deps.onLost?.(owner);
    });
  }

  /** Whether this instance holds `owner`'s home now (tests and the routing's fast path). */
  holds(owner: string): boolean {
    return this.mine.has(owner);
  }

  /** Where `owner`'s per-user work runs; takes the home here when nobody holds it (or it lapsed). */
  async place(owner: string): Promise<HomePlace> {
    if (this.mine.has(owner)) return { kind: "here" };
    // A home released between the take and the read is free again: a few tries settle it.
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = await this.deps.leases.get(HOME_LEASE, owner);
      if (await this.claim(owner, before)) return { kind: "here" };
      const row = await this.deps.leases.get(HOME_LEASE, owner);
      if (!row) continue;
      const origin = await this.deps.registry.originOf(row.holder);
      return origin ? { kind: "there", origin } : { kind: "unaddressed" };
    }
    return { kind: "unaddressed" };
  }

  /**
   * Waits until `owner`'s home lease lapses (its holder did not answer), then takes it: true when this
   * instance holds it now, false when it stayed held (its holder is alive after all) or `signal` fired.
   */
  async takeOver(owner: string, signal?: AbortSignal): Promise<boolean> {
    const { leases } = this.deps;
    const pollMs = this.deps.pollMs ?? Math.max(10, Math.floor(leases.ttlMs / 10));
    const deadline = Date.now() + 2 * leases.ttlMs;
    while (!signal?.aborted) {
      const before = await leases.get(HOME_LEASE, owner);
      if (await this.claim(owner, before)) return true;
      if (Date.now() >= deadline) return false;
      await Bun.sleep(pollMs);
    }
    return false;
  }

  /** Gives every home this instance holds back (a graceful stop, once its chat sessions are closed). */
  async releaseAll(): Promise<void> {
    for (const owner of [...this.mine]) {
      this.mine.delete(owner);
      await this.deps.leases.release(HOME_LEASE, owner);
    }
  }

  private async claim(owner: string, before: LeaseRow | undefined): Promise<boolean> {
    if (!(await this.deps.leases.take(HOME_LEASE, owner))) return false;
    this.mine.add(owner);
    if (before && before.holder !== this.deps.instance) await this.deps.onTakeover?.(owner);
    return true;
  }
}
