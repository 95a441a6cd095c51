/**
 * The preparation phase of a turn stream (spec "Turn response"): `turn_status` keep-alives every
 * `runtime.heartbeat_seconds` while the turn is claimed and its interpreter made ready, and the
 * preparation deadline. A turn that waits in line for a sandbox (the pool is at its ceiling) says so,
 * with its place in line, each time the line moves; time spent in line does not count against the
 * preparation deadline (the pool's queue deadline bounds it instead). A turn whose interpreter is still
 * starting (a cold pyodide: seconds) says that too, instead of sending contentless keep-alives.
 */
import type { TurnEvent } from "../runtime/events.ts";

/** A turn's place in the sandbox line, as the pool reports it. */
export class SandboxLine {
  /** Turns ahead of this one; undefined while not in line. */
  ahead: number | undefined;
  /** The interpreter this turn got is still starting. */
  starting = false;
  private enteredAt = 0;
  private waited = 0;
  private wake: (() => void) | undefined;

  /** The pool's report: `ahead` turns before this one, or undefined once out of the line. */
  readonly report = (ahead: number | undefined): void => {
    if (ahead !== undefined && this.ahead === undefined) this.enteredAt = Date.now();
    if (ahead === undefined && this.ahead !== undefined) this.waited += Date.now() - this.enteredAt;
    this.ahead = ahead;
    this.wake?.();
  };

  /** The pool's report that the interpreter handed to this turn is still starting. */
  readonly reportStarting = (): void => {
    this.starting = true;
    this.wake?.();
  };

  /** Milliseconds spent in line so far. */
  waitedMs(now = Date.now()): number {
    return this.waited + (this.ahead === undefined ? 0 : now - this.enteredAt);
  }

  /** Resolves at the next report. */
  changed(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }
}

export type Outcome<T> = { value: T } | { error: unknown };

export interface KeepAliveOptions {
  started: number;
  heartbeatMs: number;
  timeoutMs: number;
  line: SandboxLine;
  /** The client went away: stop sending (the work itself goes on). */
  signal: AbortSignal;
  /** Aborted when the deadline passes or the server stops, with that reason. */
  timeout: AbortController;
  shutdown: AbortSignal;
}

type StatusEvent = Extract<TurnEvent, { type: "turn_status" }>;

function status(line: SandboxLine): StatusEvent {
  if (line.ahead === undefined)
    return {
      type: "turn_status",
      phase: "preparation",
      status: "running",
      message: line.starting ? "starting a sandbox" : null,
    };
  return {
    type: "turn_status",
    phase: "preparation",
    status: "waiting",
    message: `waiting for a sandbox (place ${line.ahead + 1} in line)`,
  };
}

/**
 * Yields keep-alives until `work` settles; returns its outcome, or undefined when the client left.
 * At the deadline (or shutdown) it aborts `timeout` and waits for `work` to give up.
 */
export async function* keepAlive<T>(
  work: Promise<T>,
  o: KeepAliveOptions,
): AsyncGenerator<TurnEvent, Outcome<T> | undefined> {
  const settled = work.then(
    (value): Outcome<T> => ({ value }),
    (error: unknown): Outcome<T> => ({ error }),
  );
  const stopping = new Promise<"shutdown">((resolve) => {
    if (o.shutdown.aborted) resolve("shutdown");
    else o.shutdown.addEventListener("abort", () => resolve("shutdown"), { once: true });
  });
  // The spec's opening chunk first (running, no message); what the sandbox is doing follows.
  let shown: StatusEvent = { type: "turn_status", phase: "preparation", status: "running", message: null };
  yield shown;
  for (;;) {
    // A change (a place in line, a starting sandbox) is told at once; heartbeats repeat the last status.
    const current = status(o.line);
    if (current.message !== shown.message) {
      shown = current;
      yield shown;
    }
    const now = Date.now();
    const deadline = o.started + o.timeoutMs + o.line.waitedMs(now);
    const inLine = o.line.ahead !== undefined;
    const wait = inLine ? o.heartbeatMs : Math.max(0, Math.min(o.heartbeatMs, deadline - now));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = new Promise<"tick">((resolve) => {
      timer = setTimeout(() => resolve("tick"), wait);
    });
    const next = await Promise.race([settled, tick, o.line.changed().then(() => "moved" as const), stopping]);
    clearTimeout(timer);
    if (typeof next === "object") return next;
    if (o.signal.aborted) return undefined;
    if (next === "shutdown" || (o.line.ahead === undefined && Date.now() >= deadline)) {
      o.timeout.abort(next === "shutdown" ? "shutdown" : "timeout");
      return await settled;
    }
    if (next === "tick") yield shown;
  }
}
