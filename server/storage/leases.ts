/**
 * Leases: which server instance owns a piece of live work (a running turn, an index build), kept in the
 * core `leases` table so every instance on one database sees them (docs/design.md "Several instances").
 *
 * A lease is a row (kind, id) → holder instance, last heartbeat and expiry (ms since the epoch). `take`
 * inserts it, or takes over a row whose holder let it lapse; the heartbeat loop renews every row this
 * instance holds in one statement each beat, so a live instance's leases never lapse and a stopped
 * one's lapse within the lease time. Times are the instances' clocks: several instances need their
 * clocks in step (NTP) to within a fraction of the lease time.
 */
import type { Db } from "./db/port.ts";

/** The default lease time: a stopped instance's work is taken over after this long. */
export const DEFAULT_LEASE_MS = 5000;

export interface LeaseRow {
  kind: string;
  id: string;
  holder: string;
  heartbeat_at: number;
  expires_at: number;
}

export interface LeaseOptions {
  /** This instance's id (ctx.instanceId). */
  instance: string;
  /** How long a lease lasts without a heartbeat; the loop renews every third of it. */
  ttlMs?: number;
  /** Where a failed renewal is told (the next beat tries again). */
  onError?: (error: unknown) => void;
}

type LostListener = (kind: string, id: string) => void;

export class Leases {
  readonly instance: string;
  readonly ttlMs: number;
  private readonly held = new Set<string>();
  private readonly lost = new Set<LostListener>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly options: LeaseOptions,
  ) {
    this.instance = options.instance;
    this.ttlMs = options.ttlMs ?? DEFAULT_LEASE_MS;
  }

  /** Takes the lease for this instance: true when it was free, lapsed, or already ours. */
  async take(kind: string, id: string): Promise<boolean> {
    const now = Date.now();
    const { changes } = await this.db.run(
      `INSERT INTO leases (kind, id, holder, heartbeat_at, expires_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (kind, id) DO UPDATE SET holder = excluded.holder, heartbeat_at = excluded.heartbeat_at,
         expires_at = excluded.expires_at
       WHERE leases.expires_at < ? OR leases.holder = excluded.holder`,
      [kind, id, this.instance, now, now + this.ttlMs, now],
    );
    if (changes === 1) this.held.add(key(kind, id));
    return changes === 1;
  }

  /** Gives the lease up (only if this instance still holds it). */
  async release(kind: string, id: string): Promise<void> {
    this.held.delete(key(kind, id));
    await this.db.run("DELETE FROM leases WHERE kind = ? AND id = ? AND holder = ?", [
      kind,
      id,
      this.instance,
    ]);
  }

  /** The lease's row, whoever holds it. */
  get(kind: string, id: string): Promise<LeaseRow | undefined> {
    return this.db.get<LeaseRow>(
      "SELECT kind, id, holder, heartbeat_at, expires_at FROM leases WHERE kind = ? AND id = ?",
      [kind, id],
    );
  }

  /** Whether someone (this instance or another) holds a lease that has not lapsed. */
  async live(kind: string, id: string): Promise<boolean> {
    const row = await this.get(kind, id);
    return row !== undefined && row.expires_at >= Date.now();
  }

  /** The leases of `kind` whose holder stopped renewing them. */
  lapsed(kind: string): Promise<LeaseRow[]> {
    return this.db.all<LeaseRow>(
      "SELECT kind, id, holder, heartbeat_at, expires_at FROM leases WHERE kind = ? AND expires_at < ?",
      [kind, Date.now()],
    );
  }

  /** Renews every lease this instance holds; a lease another instance took over meanwhile is reported lost. */
  async renew(): Promise<void> {
    const now = Date.now();
    const rows = await this.db.all<{ kind: string; id: string }>(
      "UPDATE leases SET heartbeat_at = ?, expires_at = ? WHERE holder = ? RETURNING kind, id",
      [now, now + this.ttlMs, this.instance],
    );
    const renewed = new Set(rows.map((r) => key(r.kind, r.id)));
    for (const k of [...this.held]) {
      if (renewed.has(k)) continue;
      this.held.delete(k);
      const [kind, id] = k.split("\u0000") as [string, string];
      for (const listener of this.lost) listener(kind, id);
    }
  }

  /** Called when a lease this instance held was found taken over (its holder should stop the work). */
  onLost(listener: LostListener): () => void {
    this.lost.add(listener);
    return () => this.lost.delete(listener);
  }

  /** Starts the heartbeat loop (idempotent): every third of the lease time. */
  start(): void {
    if (this.timer) return;
    // One renewal at a time: a slow database must not pile beats up behind each other.
    const beat = () => {
      if (this.renewing) return;
      this.renewing = this.renew()
        .catch((error) => this.options.onError?.(error))
        .finally(() => {
          this.renewing = undefined;
        });
    };
    this.timer = setInterval(beat, Math.max(10, Math.floor(this.ttlMs / 3)));
    this.timer.unref?.();
  }

  /** Stops the heartbeat loop; the leases lapse unless released (tests stop it to play a crash). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

function key(kind: string, id: string): string {
  return `${kind}\u0000${id}`;
}
