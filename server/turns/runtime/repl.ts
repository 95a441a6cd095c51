/**
 * One turn's Python interpreter as the RLM loop sees it: runs a step with the policy's limits, turns the
 * result into one output text (stdout, stderr, traceback) and, when a step is killed at its time limit,
 * starts a fresh interpreter so the turn can go on (its Python state is gone, and the model is told so).
 * What a step prints is handed on while it runs (LiveOutput), for the turn's `output` deltas.
 */
import { type Interpreter, SandboxKilled, type ToolHandler } from "../../sandbox/interpreter.ts";
import type { AcquireOptions, InterpreterPool } from "../../sandbox/interpreter-pool.ts";
import type { StepResult } from "../../sandbox/protocol.ts";

export interface ReplSetup {
  tools: string[];
  vars: Record<string, string>;
  outputLimit: number;
  stepTimeoutMs: number;
  /** Tools that pause the step's clock: model calls, which have deadlines of their own. */
  untimedTools: ReadonlySet<string>;
}

export interface StepOutcome {
  output: string;
  result?: StepResult;
  timedOut: boolean;
}

export class Repl {
  constructor(
    private readonly pool: InterpreterPool,
    private interpreter: Interpreter,
    private readonly setup: ReplSetup,
    private readonly onToolCall: ToolHandler,
  ) {}

  static async open(
    pool: InterpreterPool,
    setup: ReplSetup,
    onToolCall: ToolHandler,
    acquire: AcquireOptions = {},
  ): Promise<Repl> {
    const interpreter = await pool.acquire(acquire);
    try {
      await interpreter.init(setup.tools, setup.vars, setup.outputLimit);
    } catch (error) {
      pool.release(interpreter);
      throw error;
    }
    return new Repl(pool, interpreter, setup, onToolCall);
  }

  /**
   * Runs one step; a cancelled step rethrows SandboxKilled("cancelled"). `onOutput` hears what it prints
   * while it runs (LiveOutput's pace and bound); the outcome has the whole output.
   */
  async step(code: string, signal: AbortSignal, onOutput?: (text: string) => void): Promise<StepOutcome> {
    const live = onOutput ? new LiveOutput(onOutput, this.setup.outputLimit) : undefined;
    try {
      const result = await this.interpreter.run(code, {
        timeoutMs: this.setup.stepTimeoutMs,
        onToolCall: this.onToolCall,
        untimedTools: this.setup.untimedTools,
        signal,
        ...(live ? { onOutput: (_stream: string, text: string) => live.push(text) } : {}),
      });
      return { output: formatOutput(result), result, timedOut: false };
    } catch (error) {
      if (!(error instanceof SandboxKilled) || error.reason === "cancelled" || signal.aborted) throw error;
      // Past its memory bound the code would only fill memory again: the turn fails with that reason.
      if (error.reason === "memory") throw error;
      // A fresh interpreter in the same pool slot: the turn does not queue again behind other turns.
      this.interpreter = await this.pool.replace(this.interpreter);
      await this.interpreter.init(this.setup.tools, this.setup.vars, this.setup.outputLimit);
      const seconds = this.setup.stepTimeoutMs / 1000;
      return {
        output:
          error.reason === "timeout"
            ? `[the step ran longer than ${seconds}s and was stopped; the interpreter restarted and its variables are gone]`
            : "[the interpreter stopped unexpectedly; it restarted and its variables are gone]",
        timedOut: true,
      };
    } finally {
      live?.close();
    }
  }

  close(): void {
    this.pool.release(this.interpreter);
  }
}

export function formatOutput(result: StepResult): string {
  let out = result.stdout;
  if (result.stderr) out += (out && !out.endsWith("\n") ? "\n" : "") + result.stderr;
  if (result.error) out += (out && !out.endsWith("\n") ? "\n" : "") + result.error;
  return out;
}

/** Printed text is handed on at least this often while a step runs... */
export const LIVE_OUTPUT_MS = 100;
/** ...or as soon as this much is pending. */
export const LIVE_OUTPUT_CHARS = 4096;

/**
 * A step's printed text handed on as it comes: batched (at most every LIVE_OUTPUT_MS, or at
 * LIVE_OUTPUT_CHARS), so Python printing in a tight loop (or writing to the host pipe itself) makes a
 * few events, not one per print; and bounded: at most `limit` characters in all, as the step's output.
 * What is pending when the step ends is dropped: the step's final output carries the whole text.
 */
export class LiveOutput {
  private pending = "";
  private left: number;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly emit: (text: string) => void,
    limit: number,
  ) {
    this.left = limit;
  }

  push(text: string): void {
    const kept = text.slice(0, this.left);
    if (!kept) return;
    this.left -= kept.length;
    this.pending += kept;
    if (this.pending.length >= LIVE_OUTPUT_CHARS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), LIVE_OUTPUT_MS);
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = "";
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const text = this.pending;
    this.pending = "";
    if (text) this.emit(text);
  }
}
