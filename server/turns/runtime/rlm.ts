/**
 * The RLM loop: each step the model answers with reasoning and Python; the Python runs in the turn's
 * interpreter; its output goes back to the model; SUBMIT(...) ends the turn. Bounded by the policy's
 * iteration, model-call, code-size and output-size caps. Also the offline mode: with the built-in
 * offline model the fenced Python blocks of the user's message run, one step each.
 */
import type { Api, AssistantMessage, Message, Model } from "@mariozechner/pi-ai";
import { offlineAnswer } from "../../models/offline.ts";
import { replyFailed, replyText, replyThinking } from "../../models/reply.ts";
import type { ModelService } from "../../models/service.ts";
import type { TurnEvent } from "./events.ts";
import { pythonBlocks, splitAnswer } from "./prompt.ts";
import type { Repl } from "./repl.ts";
import { CapReached, type UsageMeter } from "./usage.ts";

export interface RlmLimits {
  maxIters: number;
  maxCodeChars: number;
  maxOutputChars: number;
}

export interface RlmInput {
  models: ModelService;
  model: Model<Api>;
  system: string;
  prompt: string;
  repl: Repl;
  limits: RlmLimits;
  usage: UsageMeter;
  signal: AbortSignal;
  /** Receives step, reasoning, code and output events (a child passes a sink that keeps excerpts). */
  emit: (event: TurnEvent) => void;
  /** Distinguishes stream ids when several loops share a stream. */
  streamPrefix?: string;
  /** Deadline of one model call (the turn's own deadline aborts `signal`). */
  modelCallTimeoutMs: number;
}

export interface RlmResult {
  answer: string;
  /** SUBMIT's keyword fields, when there is more than an answer. */
  fields?: Record<string, unknown>;
  iterations: number;
  finishReason: "stop" | "length";
  lastCode: string | null;
  lastOutput: string | null;
}

export class AbortedError extends Error {
  override name = "AbortedError";
}

function answerOf(submitted: unknown): string {
  if (typeof submitted === "string") return submitted;
  if (submitted && typeof submitted === "object" && !Array.isArray(submitted)) {
    const fields = submitted as Record<string, unknown>;
    const keys = Object.keys(fields);
    if (typeof fields.answer === "string") return fields.answer;
    if (keys.length === 1 && keys[0] === "answer") return JSON.stringify(fields.answer);
  }
  return JSON.stringify(submitted);
}

/** Keyword fields beyond a lone `answer` are a structured result. */
function fieldsOf(submitted: unknown): Record<string, unknown> | undefined {
  if (!submitted || typeof submitted !== "object" || Array.isArray(submitted)) return undefined;
  const keys = Object.keys(submitted);
  return keys.length === 1 && keys[0] === "answer" ? undefined : (submitted as Record<string, unknown>);
}

export async function runRlm(input: RlmInput): Promise<RlmResult> {
  const { limits, emit, signal } = input;
  const prefix = input.streamPrefix ?? "";
  const messages: Message[] = [{ role: "user", content: input.prompt, timestamp: Date.now() }];
  let lastCode: string | null = null;
  let lastOutput: string | null = null;
  for (let step = 1; step <= limits.maxIters; step++) {
    if (signal.aborted) throw new AbortedError();
    const started = Date.now();
    try {
      input.usage.countCall();
    } catch (error) {
      if (!(error instanceof CapReached)) throw error;
      emit({ type: "warning", message: error.message, code: "llm_call_limit" });
      return { answer: lastOutput ?? "", iterations: step - 1, finishReason: "length", lastCode, lastOutput };
    }
    emit({ type: "step_start", step });
    const { message: reply, streamed } = await streamStep(input, messages, step, `${prefix}r${step}`);
    if (signal.aborted) throw new AbortedError();
    if (replyFailed(reply)) {
      throw new Error(reply.errorMessage ?? "The model call failed");
    }
    input.usage.add(reply.usage);
    messages.push(reply);
    const text = replyText(reply);
    const thinking = replyThinking(reply);
    const { reasoning, code } = splitAnswer(text);
    const said = [thinking.trim(), reasoning].filter(Boolean).join("\n\n");
    if (said || streamed) {
      // The closing event carries the whole text; its delta is what the stream has not shown yet.
      const delta = said.startsWith(streamed) ? said.slice(streamed.length) : "";
      emit({ type: "reasoning", streamId: `${prefix}r${step}`, step, text: said, delta, final: true });
    }
    if (!code) {
      emit({ type: "step_finish", step, durationMs: Date.now() - started });
      return {
        answer: reasoning || text.trim(),
        iterations: step,
        finishReason: "stop",
        lastCode,
        lastOutput,
      };
    }
    emit({ type: "code", streamId: `${prefix}c${step}`, step, code, isDelta: false, final: true });
    lastCode = code;
    let output: string;
    let submitted: { value: unknown } | undefined;
    if (code.length > limits.maxCodeChars) {
      output = `[the code is ${code.length} characters; the limit is ${limits.maxCodeChars}. Write a shorter step.]`;
    } else {
      // What the step prints shows while it runs; the final event below has the whole text.
      const outcome = await input.repl.step(code, signal, (chunk) =>
        emit({
          type: "output",
          streamId: `${prefix}o${step}`,
          step,
          output: chunk,
          isDelta: true,
          final: false,
        }),
      );
      output = outcome.output;
      if (outcome.result?.didSubmit) submitted = { value: outcome.result.submitted };
    }
    if (output.length > limits.maxOutputChars)
      output = `${output.slice(0, limits.maxOutputChars)}\n[output truncated]`;
    lastOutput = output;
    emit({ type: "output", streamId: `${prefix}o${step}`, step, output, isDelta: false, final: true });
    emit({ type: "step_finish", step, durationMs: Date.now() - started });
    if (submitted)
      return {
        answer: answerOf(submitted.value),
        fields: fieldsOf(submitted.value),
        iterations: step,
        finishReason: "stop",
        lastCode,
        lastOutput,
      };
    messages.push({
      role: "user",
      content: `Output of step ${step}:\n${output || "(no output)"}`,
      timestamp: Date.now(),
    });
  }
  return {
    answer: lastOutput ?? "",
    iterations: limits.maxIters,
    finishReason: "length",
    lastCode,
    lastOutput,
  };
}

/**
 * One model call, streamed: thinking, and the answer's text up to its first code fence, go out as
 * reasoning deltas while they arrive. Returns the final message and what was streamed.
 */
async function streamStep(
  input: RlmInput,
  messages: Message[],
  step: number,
  streamId: string,
): Promise<{ message: AssistantMessage; streamed: string }> {
  const deadline = AbortSignal.timeout(input.modelCallTimeoutMs);
  const stream = input.models.stream(
    input.model,
    { systemPrompt: input.system, messages },
    { signal: AbortSignal.any([input.signal, deadline]) },
  );
  let thinking = "";
  let text = "";
  let streamed = "";
  const visible = () => {
    const fence = text.indexOf("```");
    const prose = (fence === -1 ? text.replace(/`{1,2}$/, "") : text.slice(0, fence)).trim();
    return [thinking.trim(), prose].filter(Boolean).join("\n\n");
  };
  for await (const event of stream) {
    if (event.type === "thinking_delta") thinking += event.delta;
    else if (event.type === "text_delta") text += event.delta;
    else continue;
    const now = visible();
    if (now.length > streamed.length && now.startsWith(streamed)) {
      const delta = now.slice(streamed.length);
      streamed = now;
      input.emit({ type: "reasoning", streamId, step, text: now, delta, final: false });
    }
  }
  const message = await stream.result();
  if (deadline.aborted && !input.signal.aborted)
    throw new Error(`The model call ran past its limit of ${input.modelCallTimeoutMs / 1000} s`);
  return { message, streamed };
}

/**
 * Offline mode: no model; each fenced Python block of the message is one step. A message without Python
 * gets the offline model's honest answer.
 */
export async function runOffline(
  text: string,
  repl: Repl,
  limits: RlmLimits,
  signal: AbortSignal,
  emit: (event: TurnEvent) => void,
): Promise<RlmResult> {
  const blocks = pythonBlocks(text).slice(0, limits.maxIters);
  if (blocks.length === 0)
    return {
      answer: offlineAnswer(text),
      iterations: 0,
      finishReason: "stop",
      lastCode: null,
      lastOutput: null,
    };
  let lastOutput: string | null = null;
  let step = 0;
  for (const code of blocks) {
    if (signal.aborted) throw new AbortedError();
    step++;
    const started = Date.now();
    emit({ type: "step_start", step });
    emit({ type: "code", streamId: `c${step}`, step, code, isDelta: false, final: true });
    const outcome = await repl.step(code, signal, (chunk) =>
      emit({ type: "output", streamId: `o${step}`, step, output: chunk, isDelta: true, final: false }),
    );
    let output = outcome.output;
    if (output.length > limits.maxOutputChars)
      output = `${output.slice(0, limits.maxOutputChars)}\n[output truncated]`;
    lastOutput = output;
    emit({ type: "output", streamId: `o${step}`, step, output, isDelta: false, final: true });
    emit({ type: "step_finish", step, durationMs: Date.now() - started });
    if (outcome.result?.didSubmit) {
      return {
        answer: answerOf(outcome.result.submitted),
        fields: fieldsOf(outcome.result.submitted),
        iterations: step,
        finishReason: "stop",
        lastCode: code,
        lastOutput,
      };
    }
  }
  const summary = `No model is configured, so Atrium ran the ${blocks.length} Python block${blocks.length === 1 ? "" : "s"} of your message.`;
  const answer = lastOutput ? `${summary} The last one printed:\n\n${lastOutput.trimEnd()}` : summary;
  return { answer, iterations: step, finishReason: "stop", lastCode: blocks.at(-1) ?? null, lastOutput };
}
