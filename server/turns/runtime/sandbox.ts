/**
 * The sandbox pool turns run in, as the family holds it: built at start from the policy (ceiling, slot
 * kept for child runs, start deadline, warm interpreters, per-interpreter limits), `APP_SANDBOX_WARM`
 * and the snapshot cache (`<data dir>/cache`, or `APP_SANDBOX_SNAPSHOT_DIR`), warmed once the server
 * serves, closed at shutdown. A pool can also be handed in from outside (tests share one warm
 * pool between the apps of a file): the family then uses it but leaves closing it to its owner.
 */
import { join } from "node:path";
import { limitsFromPolicy } from "../../config/sandbox-limits.ts";
import type { AppContext } from "../../context.ts";
import {
  defaultMaxInterpreters,
  InterpreterPool,
  type InterpreterPoolOptions,
} from "../../sandbox/interpreter-pool.ts";

/** The pool options of an app: what its policy, data dir and environment ask for. */
export function turnSandboxOptions(ctx: Pick<AppContext, "config" | "env" | "log">): InterpreterPoolOptions {
  const { runtime, rlm } = ctx.config.policy.settings;
  // APP_SANDBOX_WARM overrides the policy's count (0: no interpreter is started before a turn needs it).
  const override = Number(ctx.env.get("APP_SANDBOX_WARM") ?? Number.NaN);
  const forced = Number.isInteger(override) && override >= 0 ? override : undefined;
  return {
    warm: forced ?? runtime.warm_interpreters,
    warmPerOwner: forced === 0 ? 0 : runtime.warm_per_active_owner,
    warmActiveMs: runtime.warm_active_owner_seconds * 1000,
    max: runtime.max_interpreters || defaultMaxInterpreters(),
    reservedForChildren: rlm.recursion_enabled ? 1 : 0,
    startTimeoutMs: runtime.sandbox_start_timeout_seconds * 1000,
    snapshotDir: ctx.env.get("APP_SANDBOX_SNAPSHOT_DIR") || join(ctx.config.dataDir, "cache"),
    log: ctx.log,
    keepOut: [ctx.config.dataDir],
    limits: limitsFromPolicy(ctx.config.policy.settings.sandbox),
    uidBase: ctx.config.policy.settings.sandbox.uid_base,
  };
}

export class TurnSandbox {
  private current: InterpreterPool | undefined;
  /** Whether closing the pool is this family's job (false for a pool handed in). */
  private owned = true;
  private warming = false;

  /** The pool, once started; undefined when it could not start (turns answer "Turn is unavailable"). */
  get pool(): InterpreterPool | undefined {
    return this.current;
  }

  /** Builds this family's own pool, unless one was handed in already. Throws when the pool cannot start. */
  start(options: InterpreterPoolOptions): void {
    if (this.current) return;
    this.use(new InterpreterPool(options));
  }

  /** Takes `pool` as this family's own (closed at shutdown); a previous own pool is closed now. */
  use(pool: InterpreterPool): void {
    this.replace(pool, true);
  }

  /** Uses a pool owned elsewhere: never closed by this family. */
  share(pool: InterpreterPool): void {
    this.replace(pool, false);
  }

  /** Starts the warm interpreters once, in the background (a listening server, right after composing). */
  warm(): void {
    if (this.warming || !this.current) return;
    this.warming = true;
    void this.current.warm();
  }

  /** Closes the pool when it is this family's own; a shared one is only let go. */
  close(): void {
    if (this.owned) this.current?.close();
  }

  private replace(pool: InterpreterPool, owned: boolean): void {
    if (this.current !== pool && this.owned) this.current?.close();
    this.current = pool;
    this.owned = owned;
  }
}
