/**
 * Turns among several instances on one database (docs/design.md "Several instances"): a running turn
 * holds the lease ("turn", run id) of the instance executing it; each committed batch of its event log
 * is signalled on the bus (`LOG_CHANNEL`), so a follower on another instance reads the log from the
 * database as it grows; a cancellation reaches the executing instance over the bus (`CANCEL_CHANNEL`);
 * and on PostgreSQL each instance periodically fails the runs whose lease lapsed (their instance
 * stopped), logging the terminal event their followers end with.
 *
 * On the embedded SQLite engine there is one instance: leases are still taken (cheap), the bus is
 * in-process, and startup fails every running run as before.
 */
import type { Logger } from "../../log.ts";
import type { SignalBus } from "../../storage/bus/bus.ts";
import type { Leases } from "../../storage/leases.ts";
import { storedExpander } from "../runtime/event-budget.ts";
import { TERMINAL_TYPES, type TurnEvent } from "../runtime/events.ts";
import type { LiveRuns } from "../runtime/live-run.ts";
import type { TurnRunStore } from "../stores/runs.ts";

export const TURN_LEASE = "turn";
/** Payload: a run id whose log gained a committed batch (or whose outcome committed). */
export const LOG_CHANNEL = "atrium_turn_log";
/** Payload: a run id whose cancellation was requested on some instance. */
export const CANCEL_CHANNEL = "atrium_turn_cancel";

/** Something a stream follows to its terminal event: a LiveRun here, or a run executing elsewhere. */
export interface Followable {
  follow(signal: AbortSignal): AsyncGenerator<TurnEvent>;
}

export interface TurnInstancesDeps {
  runs: Pick<TurnRunStore, "byId" | "eventsFrom" | "orphaned" | "failOrphan" | "failInterrupted">;
  live: Pick<LiveRuns, "get">;
  leases: Leases;
  bus: SignalBus;
  /** Whether other instances may share the database (PostgreSQL): lapsed leases are then swept. */
  shared: boolean;
  log: Logger;
}

export class TurnInstances {
  private readonly waiting = new Map<string, Set<() => void>>();
  private unsubscribe: (() => Promise<void>)[] = [];
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private sweeping: Promise<number> | undefined;

  constructor(private readonly deps: TurnInstancesDeps) {}

  /** At the family's start: recovery of runs a crash left running, then the signals and the sweeper. */
  async start(): Promise<number> {
    const { bus, live, leases, shared } = this.deps;
    this.unsubscribe.push(
      await bus.subscribe(LOG_CHANNEL, (runId) => {
        for (const wake of this.waiting.get(runId) ?? []) wake();
      }),
      await bus.subscribe(CANCEL_CHANNEL, (runId) => live.get(runId)?.controller.abort("cancelled")),
    );
    // A lease another instance took over (ours lapsed, it failed the run): stop executing it here.
    const off = leases.onLost((kind, id) => {
      if (kind === TURN_LEASE) live.get(id)?.controller.abort("lease_lost");
    });
    this.unsubscribe.push(async () => void off());
    if (!shared) return this.deps.runs.failInterrupted();
    const failed = await this.sweep();
    this.sweeper = setInterval(() => void this.sweep(), Math.max(20, Math.floor(leases.ttlMs / 2)));
    this.sweeper.unref?.();
    return failed;
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    await this.sweeping;
    for (const off of this.unsubscribe.splice(0)) await off().catch(() => {});
  }

  /** Takes the run's lease for this instance, before the run is claimed (so no sweep fails it meanwhile). */
  hold(runId: string): Promise<boolean> {
    return this.deps.leases.take(TURN_LEASE, runId);
  }

  /** Gives the run's lease up once its outcome is committed (or its claim failed). */
  async release(runId: string): Promise<void> {
    await this.deps.leases
      .release(TURN_LEASE, runId)
      .catch((error) => this.deps.log.warn("a turn lease was not released", { runId, error }));
  }

  /** Tells followers anywhere that the run's log grew (called after each batch commits). */
  logged(runId: string): void {
    void this.deps.bus
      .publish(LOG_CHANNEL, runId)
      .catch((error) => this.deps.log.warn("a turn log signal was not sent", { runId, error }));
  }

  /** Asks the instance executing the run (wherever it is) to cancel it. */
  async cancel(runId: string): Promise<void> {
    const here = this.deps.live.get(runId);
    if (here) here.controller.abort("cancelled");
    else await this.deps.bus.publish(CANCEL_CHANNEL, runId);
  }

  /** Whether the running run is executed by another instance (its lease is not ours). */
  async elsewhere(runId: string): Promise<boolean> {
    const lease = await this.deps.leases.get(TURN_LEASE, runId);
    return lease !== undefined && lease.holder !== this.deps.leases.instance;
  }

  /** A run executing on another instance, followed through its log: the events so far, then live ones. */
  remote(runId: string): Followable {
    return { follow: (signal) => this.followLog(runId, signal) };
  }

  private async *followLog(runId: string, signal: AbortSignal): AsyncGenerator<TurnEvent> {
    const { runs, leases } = this.deps;
    const expand = storedExpander();
    let next = 0;
    while (!signal.aborted) {
      // Listening before reading: a batch committed between the read and the wait still wakes us.
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      const set = this.waiting.get(runId) ?? new Set();
      this.waiting.set(runId, set.add(wake));
      try {
        const run = await runs.byId(runId);
        // Only the next sequence numbers in a row: a later batch never skips one not yet committed.
        for (const row of await runs.eventsFrom(runId, next)) {
          if (row.seq !== next) break;
          next++;
          const event = expand(row.event);
          yield event;
          if (TERMINAL_TYPES.has(event.type)) return;
        }
        if (run?.status !== "running") {
          // Committed without a logged terminal event (failed by a startup's recovery): close it here.
          yield {
            type: "turn_error",
            message: run?.error_message ?? "The turn did not finish",
            code: run?.error_code ?? "execution_failed",
            durationMs: run?.duration_ms ?? 0,
          };
          return;
        }
        // The signal is the fast path; a lease time's poll covers a lost one.
        const abort = new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => resolve(), { once: true }),
        );
        await Promise.race([woken, abort, Bun.sleep(leases.ttlMs)]);
      } finally {
        set.delete(wake);
        if (set.size === 0) this.waiting.delete(runId);
      }
    }
  }

  /** Fails each running run whose lease lapsed, after taking its lease (so one instance does it). */
  private sweep(): Promise<number> {
    if (this.sweeping) return this.sweeping;
    const { runs, leases, live, log } = this.deps;
    this.sweeping = (async () => {
      let failed = 0;
      try {
        for (const run of await runs.orphaned()) {
          // Our own run whose lease lapsed while this process was starved: renewed, not failed.
          if (live.get(run.id)) {
            await leases.take(TURN_LEASE, run.id);
            continue;
          }
          if (!(await leases.take(TURN_LEASE, run.id))) continue;
          try {
            if (await runs.failOrphan(run)) {
              failed++;
              this.logged(run.id);
            }
          } finally {
            await leases.release(TURN_LEASE, run.id);
          }
        }
        if (failed > 0) log.warn("runs of a stopped instance were marked failed", { failed });
      } catch (error) {
        log.warn("the sweep of lapsed turn leases failed", { error: (error as Error).message });
      }
      return failed;
    })().finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }
}
