/**
 * The SQL of attempt limits (`auth_limit_hits`): sliding windows kept in the app's database (app.db or
 * PostgreSQL, through the database port), so a restart keeps them and several instances on one database
 * share them.
 *
 * `reserve` checks and records in one write transaction, so two callers (two requests of this process,
 * or two processes) can never both see the last free slot: the attempt is counted before the work it
 * guards starts, not after. On SQLite the transaction takes the write lock up front (BEGIN IMMEDIATE);
 * on PostgreSQL, where transactions run side by side, it first takes a transaction-scoped advisory lock
 * per key (in key order, so two reservations cannot deadlock). A reservation covers several windows at
 * once (a sign-in's client address and account): all of them, or none. Whatever the number of keys, the
 * check is one statement and the record one more.
 */
import type { Clock } from "../lib/clock.ts";
import type { Db, Queryable } from "../storage/db/port.ts";

/** One window's subject: the key (limit name and subject) and the window's size. */
export interface LimitKey {
  key: string;
  limit: number;
  windowMs: number;
}

export type Reservation = { ok: true; ids: number[] } | { ok: false; retryAfterSeconds: number };

/** How often expired rows of every key are swept (a key nobody uses again is otherwise never read). */
const SWEEP_EVERY_MS = 60_000;

export class LimitStore {
  private lastSweep = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock = Date.now,
  ) {}

  /** Counts one attempt under every key, or under none when any window is full (then: how long to wait). */
  reserve(keys: LimitKey[]): Promise<Reservation> {
    return this.db.tx(async (tx): Promise<Reservation> => {
      if (this.db.engine === "postgres") {
        const locks = [...new Set(keys.map((k) => k.key))].sort();
        const calls = locks.map(() => "pg_advisory_xact_lock(hashtext(?))").join(", ");
        await tx.get(`SELECT 1 AS locked FROM (SELECT ${calls}) l`, locks);
      }
      const now = this.clock();
      await this.sweep(tx, now);
      const wait = await this.waitAt(tx, keys, now);
      if (wait > 0) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) };
      const rows = await tx.all<{ id: number; key: string }>(
        `INSERT INTO auth_limit_hits (key, at, expires_at) VALUES ${keys.map(() => "(?, ?, ?)").join(", ")}
         RETURNING id, key`,
        keys.flatMap(({ key, windowMs }) => [key, now, now + windowMs]),
      );
      // In the order of `keys` (a caller gives back one key's attempt by its position).
      const ids = keys.map(({ key }) => {
        const at = rows.findIndex((r) => r.key === key);
        const [row] = rows.splice(at, 1);
        return row?.id as number;
      });
      return { ok: true, ids };
    });
  }

  /**
   * Seconds until a slot of every key is free, or 0 when one is free now; records nothing (bearer tokens
   * check this before they are looked up: bearer-guesses.ts). One read.
   */
  async retryAfter(keys: LimitKey[]): Promise<number> {
    const wait = await this.waitAt(this.db, keys, this.clock());
    return wait > 0 ? Math.max(1, Math.ceil(wait / 1000)) : 0;
  }

  /**
   * Milliseconds until every key has a free slot. A key's window is full while its limit-th newest
   * attempt is still in it, and a slot frees when that attempt leaves: one subquery per key, in one
   * statement.
   */
  private async waitAt(q: Queryable, keys: LimitKey[], now: number): Promise<number> {
    if (keys.length === 0) return 0;
    const parts = keys.map(
      () =>
        "SELECT (SELECT at FROM auth_limit_hits WHERE key = ? AND at > ? ORDER BY at DESC LIMIT 1 OFFSET ?) + ? AS free_at",
    );
    const row = await q.get<{ free_at: number | null }>(
      `SELECT max(free_at) AS free_at FROM (${parts.join(" UNION ALL ")}) w`,
      keys.flatMap(({ key, limit, windowMs }) => [key, now - windowMs, limit - 1, windowMs]),
    );
    const freeAt = row?.free_at ?? null;
    return freeAt === null ? 0 : Math.max(0, freeAt - now);
  }

  /** Gives reserved attempts back (they did not happen, or they should not count). */
  async release(ids: number[]): Promise<void> {
    for (const id of ids) await this.db.run("DELETE FROM auth_limit_hits WHERE id = ?", [id]);
  }

  /** Forgets every attempt of a key (a successful sign-in clears its account's failures). */
  async clear(key: string): Promise<void> {
    await this.db.run("DELETE FROM auth_limit_hits WHERE key = ?", [key]);
  }

  private async sweep(q: Queryable, now: number): Promise<void> {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    await q.run("DELETE FROM auth_limit_hits WHERE expires_at <= ?", [now]);
  }
}
