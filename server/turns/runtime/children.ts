/**
 * Child RLM runs (`rlm_query`): each child gets a fresh interpreter of its own, model queries only (no
 * host tools), the child caps of the policy, and depth 1 (a child cannot start children). At most
 * `recursion_max_parallel_children` run at once; each reports `child_progress` to the parent's stream.
 * A child runs under its own wall-clock deadline (`recursion_child_timeout_seconds`) and the turn's.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import type { PolicySettings } from "../../config/policy-schema.ts";
import type { ModelService } from "../../models/service.ts";
import type { InterpreterPool } from "../../sandbox/interpreter-pool.ts";
import type { TurnEvent } from "./events.ts";
import { hostToolHandler, toolNames, UNTIMED_TOOLS } from "./host-tools.ts";
import { systemPrompt } from "./prompt.ts";
import { Repl } from "./repl.ts";
import { AbortedError, runRlm } from "./rlm.ts";
import { UsageMeter } from "./usage.ts";

export interface ChildRunnerInput {
  pool: InterpreterPool;
  models: ModelService;
  model: Model<Api>;
  rlm: PolicySettings["rlm"];
  parentRunId: string;
  usage: UsageMeter;
  signal: AbortSignal;
  emit: (event: TurnEvent) => void;
}

const EXCERPT = 400;
const excerpt = (text: string | null) =>
  text === null ? null : text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : text;

/** A counting semaphore: at most `limit` holders at once. */
class Semaphore {
  private active = 0;
  private readonly queue: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  async acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }
  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.active--;
  }
}

export function childRunner(input: ChildRunnerInput) {
  const { rlm } = input;
  const slots = new Semaphore(rlm.recursion_max_parallel_children);
  let calls = 0;

  const runOne = async ({ prompt, label }: { prompt: string; label: string }): Promise<string> => {
    if (calls >= rlm.recursion_max_calls)
      throw new Error(`the child-run limit of ${rlm.recursion_max_calls} per turn is reached`);
    if (prompt.length > rlm.recursion_max_prompt_chars) {
      throw new Error(`a child prompt is limited to ${rlm.recursion_max_prompt_chars} characters`);
    }
    calls++;
    const childId = `${input.parentRunId}.c${calls}`;
    const progress = (
      state: Extract<TurnEvent, { type: "child_progress" }>["state"],
      extra: Partial<Extract<TurnEvent, { type: "child_progress" }>> = {},
    ) =>
      input.emit({
        type: "child_progress",
        childId,
        taskLabel: label.slice(0, 120),
        state,
        elapsedMs: Date.now() - started,
        outcome: null,
        evidence: [],
        gaps: [],
        resultFileCount: 0,
        codeExcerpt: null,
        outputExcerpt: null,
        cleanupState: "pending",
        parentRunId: input.parentRunId,
        ...extra,
      });
    let started = Date.now();
    progress("not_started");
    await slots.acquire();
    started = Date.now();
    const usage = new UsageMeter(rlm.recursion_child_max_llm_calls, input.usage);
    const deadline = AbortSignal.timeout(rlm.recursion_child_timeout_seconds * 1000);
    const signal = AbortSignal.any([input.signal, deadline]);
    const modelCallTimeoutMs = rlm.model_call_timeout_seconds * 1000;
    const tools = {
      models: input.models,
      model: input.model,
      usage,
      signal,
      emit: () => {},
      modelCallTimeoutMs,
    };
    let repl: Repl | undefined;
    try {
      if (signal.aborted) throw new AbortedError();
      progress("running");
      repl = await Repl.open(
        input.pool,
        {
          tools: toolNames(tools),
          vars: {},
          outputLimit: rlm.recursion_child_max_output_chars,
          stepTimeoutMs: rlm.step_timeout_seconds * 1000,
          untimedTools: UNTIMED_TOOLS,
        },
        hostToolHandler(tools),
        { child: true, signal },
      );
      const result = await runRlm({
        models: input.models,
        model: input.model,
        system: systemPrompt({
          tools: toolNames(tools),
          skills: [],
          preloaded: [],
          attachments: [],
          maxIters: rlm.recursion_child_max_iters,
          child: true,
        }),
        prompt,
        repl,
        limits: {
          maxIters: rlm.recursion_child_max_iters,
          maxCodeChars: rlm.max_code_chars,
          maxOutputChars: rlm.recursion_child_max_output_chars,
        },
        usage,
        signal,
        emit: () => {},
        modelCallTimeoutMs,
      });
      const answer = result.answer.slice(0, rlm.recursion_child_max_output_chars);
      repl.close();
      repl = undefined;
      progress(result.finishReason === "stop" ? "completed" : "timed_out", {
        outcome: excerpt(answer),
        codeExcerpt: excerpt(result.lastCode),
        outputExcerpt: excerpt(result.lastOutput),
        gaps: result.finishReason === "stop" ? [] : ["the child reached its step limit"],
        cleanupState: "done",
      });
      return answer;
    } catch (error) {
      repl?.close();
      const cancelled = input.signal.aborted;
      if (!cancelled && deadline.aborted) {
        const message = `the child run ran past its limit of ${rlm.recursion_child_timeout_seconds} s`;
        progress("timed_out", { outcome: message, gaps: [message], cleanupState: "done" });
        throw new Error(message);
      }
      const aborted = cancelled || error instanceof AbortedError;
      progress(aborted ? "cancelled" : "failed", {
        outcome: aborted ? null : excerpt((error as Error).message),
        cleanupState: "done",
      });
      throw aborted ? new AbortedError() : error;
    } finally {
      slots.release();
    }
  };

  return (prompts: { prompt: string; label: string }[]) => Promise.all(prompts.map(runOne));
}
