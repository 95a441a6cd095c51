/**
 * The server's handle on one sandbox subprocess: waits for it to be ready (within a start deadline), runs
 * steps, serves the host tool calls the Python makes while a step runs, and enforces the per-step time
 * limit with a hard kill. The step's clock is wall-clock and keeps running through host tools (files,
 * artifacts: the Python could loop on them); it pauses only for the tools the caller names as model calls,
 * which run under deadlines of their own.
 *
 * The start deadline is not wall-clock: a machine busy with other work slows a start down without making
 * it wrong, so a start is stopped only when the interpreter's own CPU time (its whole process tree, from
 * /proc) passes the deadline, or when that CPU time stops moving for as long (a start that hangs).
 */
import type { Subprocess } from "bun";
import { type Confinement, machineOutOfMemory, treeCpuMs, watchStart } from "./confinement.ts";
import {
  type HostMessage,
  parseSandboxLine,
  type SandboxMessage,
  type StartReport,
  type StepResult,
  startReportOf,
} from "./protocol.ts";

/** Longer than any legitimate message (outputs are bounded far below this). */
const MAX_LINE_CHARS = 32 * 1024 * 1024;

export type ToolHandler = (name: string, args: unknown[]) => Promise<unknown>;

export class SandboxKilled extends Error {
  override name = "SandboxKilled";
  constructor(
    readonly reason: "timeout" | "cancelled" | "exited" | "start_timeout" | "memory",
    /** Why, in words, when more is known (a start that failed: what it was doing, what the machine lacked). */
    readonly detail?: string,
  ) {
    super(
      reason === "timeout"
        ? "The step ran past its time limit and the interpreter was stopped"
        : reason === "cancelled"
          ? "The interpreter was stopped"
          : reason === "start_timeout"
            ? "The interpreter did not become ready in time and was stopped"
            : reason === "memory"
              ? "The code used more memory than the sandbox allows (policy sandbox.memory_mb) and the interpreter was stopped"
              : "The interpreter exited unexpectedly",
    );
  }
}

/** How a start went: wall-clock and CPU time from spawn to ready, and whether it came from the snapshot. */
export interface StartStats {
  wallMs: number;
  cpuMs: number | undefined;
  snapshot: boolean;
  /** What the sandbox said of its start (protocol.ts StartReport; untrusted, for benchmarks and tests). */
  report?: StartReport;
}

export interface InterpreterRunOptions {
  /** Wall-clock limit of the step, host tool calls included. */
  timeoutMs: number;
  onToolCall?: ToolHandler;
  /** Tools whose calls pause the step's clock (model calls, which have deadlines of their own). */
  untimedTools?: ReadonlySet<string>;
  signal?: AbortSignal;
  /**
   * Told what the step prints while it runs (as the sandbox sends it, at most the output limit per
   * stream); the result still carries the whole output.
   */
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
}

export interface InterpreterOptions {
  /**
   * The start deadline: killed (ready rejects with SandboxKilled "start_timeout") when the process tree
   * used this much CPU without reporting ready, or its CPU time did not move for this long. Where /proc
   * is missing (not Linux), the wall-clock time since spawn.
   */
  startTimeoutMs?: number;
  /** Bounds the process (cgroups or a watchdog) and tells why it died. */
  confinement?: Confinement;
  /** A descriptor the process inherits as isolation.ts SNAPSHOT_FD (the snapshot it starts from). */
  snapshotFd?: number;
}

interface Waiter {
  accept(message: SandboxMessage): boolean;
}

export class Interpreter {
  readonly ready: Promise<{ python: string }>;
  private readonly proc: Subprocess<"pipe", "pipe", "ignore"> | undefined;
  private readonly waiters = new Set<Waiter>();
  private readonly exitListeners = new Set<() => void>();
  private nextRunId = 0;
  private exited = false;
  private busy = false;
  /** Where the running step's printed text goes, with what each stream may still send. */
  private output:
    | { id: number; sink: InterpreterRunOptions["onOutput"]; left: { stdout: number; stderr: number } }
    | undefined;
  /** The turn's output limit (init), which bounds what a step may stream. */
  private outputLimit = 65536;
  /** True once pyodide has loaded and the interpreter answers. */
  isReady = false;
  /** Set when ready: how long the start took. */
  startStats: StartStats | undefined;

  /** Why the process died when the sandbox stopped it (its memory bound), else undefined. */
  private deathReason: "memory" | undefined;
  private readonly exitedPromise: Promise<unknown>;

  constructor(command: string[], options: InterpreterOptions = {}) {
    const { confinement } = options;
    const spawnedAt = performance.now();
    let spawnError: Error | undefined;
    try {
      const inherited = options.snapshotFd === undefined ? [] : [options.snapshotFd];
      this.proc = Bun.spawn(command, {
        env: {},
        stdio: ["pipe", "pipe", "ignore", ...inherited],
      }) as Subprocess<"pipe", "pipe", "ignore">;
    } catch (error) {
      // fork itself failed (no memory, too many processes): an interpreter that exited at once.
      spawnError = error as Error;
    }
    const pid = this.proc?.pid ?? -1;
    if (this.proc) confinement?.watch(pid, () => this.kill());
    void this.readLoop();
    this.exitedPromise = this.proc ? this.proc.exited : Promise.resolve();
    void this.exitedPromise.then(() => {
      this.deathReason = this.proc ? confinement?.exited(pid) : undefined;
      this.exited = true;
      for (const listener of this.exitListeners) listener();
    });
    let startKill: SandboxKilled | undefined;
    const watch =
      options.startTimeoutMs === undefined || !this.proc
        ? undefined
        : watchStart(pid, options.startTimeoutMs, (why) => {
            startKill = new SandboxKilled("start_timeout", why);
            this.kill();
          });
    const readyMessage = this.next((m) => m.type === "ready");
    this.ready = readyMessage.then(
      (m) => {
        const cpuMs = pid > 0 ? treeCpuMs(pid) : undefined;
        const snapshot = (m as { snapshot?: unknown }).snapshot === true;
        const report = startReportOf((m as { start?: unknown }).start);
        this.startStats = {
          wallMs: performance.now() - spawnedAt,
          cpuMs,
          snapshot,
          ...(report ? { report } : {}),
        };
        return { python: String((m as { python: unknown }).python) };
      },
      (error: unknown) => {
        throw startKill ?? this.startDeath(spawnError) ?? error;
      },
    );
    this.ready.then(
      () => {
        clearInterval(watch);
        this.isReady = true;
      },
      () => clearInterval(watch),
    );
  }

  /** Why a process that exited before it was ready did, when more than "it exited" is known. */
  private startDeath(spawnError: Error | undefined): SandboxKilled | undefined {
    if (machineOutOfMemory()) return new SandboxKilled("memory", "the machine is out of memory");
    if (spawnError)
      return new SandboxKilled("exited", `its process could not be started (${spawnError.message})`);
    if (this.deathReason === "memory")
      return new SandboxKilled(
        "memory",
        "it used more memory than the sandbox allows (policy sandbox.memory_mb)",
      );
    return undefined;
  }

  get alive(): boolean {
    return !this.exited;
  }

  get pid(): number {
    return this.proc?.pid ?? -1;
  }

  /** Binds the built-ins (tool names) and variables (e.g. `context`) for this interpreter's turn. */
  async init(tools: string[], vars: Record<string, string>, outputLimit: number): Promise<void> {
    await this.ready;
    this.outputLimit = outputLimit;
    const done = this.next((m) => m.type === "initialized");
    this.send({ type: "init", tools, vars, outputLimit });
    await done;
  }

  /** Runs one step. Throws SandboxKilled when it times out, is cancelled or the process dies. */
  async run(code: string, options: InterpreterRunOptions): Promise<StepResult> {
    if (this.busy) throw new Error("the interpreter is already running a step");
    await this.ready;
    this.busy = true;
    const id = ++this.nextRunId;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let killedFor: SandboxKilled["reason"] | undefined;
    // The step's clock: `left` ms remain, counted from `armedAt` while the timer runs.
    let left = options.timeoutMs;
    let armedAt = 0;
    const arm = () => {
      armedAt = performance.now();
      timer = setTimeout(() => {
        killedFor = "timeout";
        this.kill();
      }, left);
    };
    const pause = () => {
      clearTimeout(timer);
      left = Math.max(0, left - (performance.now() - armedAt));
    };
    const onAbort = () => {
      killedFor ??= "cancelled";
      this.kill();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    const room = this.outputLimit + 1;
    this.output = { id, sink: options.onOutput, left: { stdout: room, stderr: room } };
    try {
      arm();
      this.send({ type: "run", id, code });
      for (;;) {
        const message = await this.next(
          (m) => (m.type === "result" && m.id === id) || m.type === "tool_call",
        ).catch(() => {
          throw new SandboxKilled(killedFor ?? this.deathReason ?? "exited");
        });
        if (message.type === "result") return normalise(message.result);
        if (message.type !== "tool_call") continue;
        const untimed = options.untimedTools?.has(String(message.name)) === true;
        if (untimed) pause();
        // A kill (time limit, cancellation) ends the step at once, even while the tool still works.
        const reply = await Promise.race([this.serve(message, options.onToolCall), this.gone()]);
        if (killedFor || !reply) throw new SandboxKilled(killedFor ?? "exited");
        this.send(reply);
        if (untimed) arm();
      }
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      this.output = undefined;
      this.busy = false;
    }
  }

  kill(): void {
    if (!this.exited) this.proc?.kill("SIGKILL");
  }

  /** Resolves when the process has exited (killed or not). */
  whenExited(): Promise<void> {
    return this.gone();
  }

  /** Resolves (with nothing) when the process has exited. */
  private gone(): Promise<undefined> {
    return this.exitedPromise.then(() => undefined);
  }

  private async serve(call: SandboxMessage & { type: "tool_call" }, handler?: ToolHandler) {
    const callId = Number(call.callId);
    const name = String(call.name);
    const args = Array.isArray(call.args) ? call.args : [];
    if (!handler) return { type: "tool_result" as const, callId, error: `${name} is not available` };
    try {
      const result = await handler(name, args);
      return { type: "tool_result" as const, callId, result: result ?? null };
    } catch (error) {
      return { type: "tool_result" as const, callId, error: (error as Error).message ?? String(error) };
    }
  }

  private send(message: HostMessage): void {
    if (this.exited || !this.proc) return;
    this.proc.stdin.write(`${JSON.stringify(message)}\n`);
    this.proc.stdin.flush();
  }

  /**
   * Printed text of the running step, handed on at once (in order with the messages around it): the
   * sandbox is untrusted, so only the running step's, as text, up to the output limit of each stream.
   */
  private streamed(message: SandboxMessage & { type: "output" }): void {
    const output = this.output;
    if (!output?.sink || message.id !== output.id || typeof message.text !== "string") return;
    const stream = message.stream === "stderr" ? "stderr" : "stdout";
    const text = message.text.slice(0, output.left[stream]);
    output.left[stream] -= text.length;
    if (text) output.sink(stream, text);
  }

  /** The next message that `accept`s; rejects when the process exits first. */
  private next(accept: (m: SandboxMessage) => boolean): Promise<SandboxMessage> {
    return new Promise((resolve, reject) => {
      if (this.exited) return reject(new SandboxKilled("exited"));
      const onExit = () => {
        this.waiters.delete(waiter);
        reject(new SandboxKilled("exited"));
      };
      const waiter: Waiter = {
        accept: (m) => {
          if (!accept(m)) return false;
          this.waiters.delete(waiter);
          this.exitListeners.delete(onExit);
          resolve(m);
          return true;
        },
      };
      this.waiters.add(waiter);
      this.exitListeners.add(onExit);
    });
  }

  private async readLoop(): Promise<void> {
    if (!this.proc) return;
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of this.proc.stdout as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let at = buffer.indexOf("\n");
      while (at !== -1) {
        const message = parseSandboxLine(buffer.slice(0, at));
        buffer = buffer.slice(at + 1);
        if (message?.type === "output") this.streamed(message);
        else if (message) for (const waiter of [...this.waiters]) if (waiter.accept(message)) break;
        at = buffer.indexOf("\n");
      }
      // The sandbox is untrusted: a line that never ends must not grow the server's memory.
      if (buffer.length > MAX_LINE_CHARS) {
        this.kill();
        return;
      }
    }
  }
}

/** The sandbox's answer is untrusted: keep only the fields and types the protocol defines. */
function normalise(r: Partial<StepResult>): StepResult {
  return {
    stdout: typeof r.stdout === "string" ? r.stdout : "",
    stderr: typeof r.stderr === "string" ? r.stderr : "",
    error: typeof r.error === "string" ? r.error : null,
    submitted: r.submitted ?? null,
    didSubmit: r.didSubmit === true,
    truncated: r.truncated === true,
  };
}
