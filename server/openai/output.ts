/**
 * What every model kind produces, and how it goes on the wire. A kind yields `Piece`s (text, reasoning,
 * a tool call, extra fields, the finish); this file turns them into OpenAI's `chat.completion` object or
 * its `chat.completion.chunk` SSE stream, and applies the request's stop sequences to the text whatever
 * produced it (a provider that ignores `stop` still stops, and the upstream work ends there).
 */

import { AppError } from "../http/errors.ts";
import { sseResponse } from "../http/sse.ts";
import { openaiEnvelope } from "./errors.ts";

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export type FinishReason = "stop" | "length" | "tool_calls";

export type Piece =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "tool_call"; id: string; name: string; arguments: string }
  /** A field added to the message (search's context tables), non-standard and ignored by clients. */
  | { type: "extra"; key: string; value: unknown }
  | { type: "finish"; reason: FinishReason; usage?: TokenUsage };

export type Pieces = (signal: AbortSignal) => AsyncIterable<Piece>;

export interface Reply {
  model: string;
  stop: string[];
}

const ZERO: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/** Cuts the text at the first stop sequence, holding back a tail that could still become one. */
class StopCutter {
  private full = "";
  private sent = 0;
  private readonly hold: number;
  stopped = false;

  constructor(private readonly stops: string[]) {
    this.hold = Math.max(0, ...stops.map((s) => s.length - 1));
  }

  push(text: string): string {
    if (this.stopped) return "";
    this.full += text;
    const from = Math.max(0, this.sent - this.hold);
    let cut = -1;
    for (const stop of this.stops) {
      const at = this.full.indexOf(stop, from);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    const end = cut >= 0 ? cut : this.full.length - this.hold;
    if (cut >= 0) this.stopped = true;
    if (end <= this.sent) return "";
    const out = this.full.slice(this.sent, end);
    this.sent = end;
    return out;
  }

  flush(): string {
    if (this.stopped) return "";
    const out = this.full.slice(this.sent);
    this.sent = this.full.length;
    return out;
  }
}

/** The pieces with stop sequences applied: text past a stop is dropped and the producer is ended. */
async function* stopped(source: AsyncIterable<Piece>, stops: string[]): AsyncGenerator<Piece> {
  if (stops.length === 0) return yield* source;
  const cutter = new StopCutter(stops);
  for await (const piece of source) {
    if (piece.type === "text") {
      const text = cutter.push(piece.text);
      if (text) yield { type: "text", text };
      if (cutter.stopped) return yield { type: "finish", reason: "stop" };
      continue;
    }
    if (piece.type === "finish") {
      const rest = cutter.flush();
      if (rest) yield { type: "text", text: rest };
    }
    yield piece;
  }
}

const completionId = () => `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`;
const now = () => Math.floor(Date.now() / 1000);

/** The whole answer as one `chat.completion` object. */
export async function completion(pieces: Pieces, reply: Reply, signal: AbortSignal) {
  let content = "";
  let reasoning = "";
  const toolCalls: { id: string; type: "function"; function: { name: string; arguments: string } }[] = [];
  const extra: Record<string, unknown> = {};
  let finish: FinishReason = "stop";
  let usage = ZERO;
  for await (const piece of stopped(pieces(signal), reply.stop)) {
    if (piece.type === "text") content += piece.text;
    else if (piece.type === "reasoning") reasoning += piece.text;
    else if (piece.type === "tool_call")
      toolCalls.push({
        id: piece.id,
        type: "function",
        function: { name: piece.name, arguments: piece.arguments },
      });
    else if (piece.type === "extra") extra[piece.key] = piece.value;
    else {
      finish = piece.reason;
      usage = piece.usage ?? usage;
    }
  }
  return {
    id: completionId(),
    object: "chat.completion" as const,
    created: now(),
    model: reply.model,
    system_fingerprint: null,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant" as const,
          content: content || (toolCalls.length ? null : ""),
          refusal: null,
          ...(reasoning ? { reasoning_content: reasoning } : {}),
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
          ...extra,
        },
        logprobs: null,
        finish_reason: finish,
      },
    ],
    usage,
  };
}

/** The answer as OpenAI's SSE stream of `chat.completion.chunk`s, `data: [DONE]` last. */
export function completionStream(
  pieces: Pieces,
  reply: Reply & { includeUsage: boolean },
  signal: AbortSignal,
): Response {
  const id = completionId();
  const created = now();
  const chunk = (delta: Record<string, unknown>, finish: FinishReason | null = null, usage?: TokenUsage) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: reply.model,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(reply.includeUsage ? { usage: usage ?? null } : {}),
  });
  async function* frames(abort: AbortSignal) {
    yield { data: chunk({ role: "assistant", content: "" }) };
    let calls = 0;
    for await (const piece of stopped(pieces(abort), reply.stop)) {
      if (piece.type === "text") yield { data: chunk({ content: piece.text }) };
      else if (piece.type === "reasoning") yield { data: chunk({ reasoning_content: piece.text }) };
      else if (piece.type === "extra") yield { data: chunk({ [piece.key]: piece.value }) };
      else if (piece.type === "tool_call") {
        const call = {
          index: calls++,
          id: piece.id,
          type: "function",
          function: { name: piece.name, arguments: piece.arguments },
        };
        yield { data: chunk({ tool_calls: [call] }) };
      } else {
        yield { data: chunk({}, piece.reason) };
        if (reply.includeUsage) yield { data: { ...chunk({}), choices: [], usage: piece.usage ?? ZERO } };
      }
    }
  }
  return sseResponse(frames, {
    signal,
    done: true,
    // Headers are sent: the error goes as a data frame in OpenAI's envelope, which its SDKs raise.
    onError: (error) => [{ data: openaiEnvelope.body(errorInfoOf(error)) }],
  });
}

function errorInfoOf(error: unknown) {
  if (error instanceof AppError) return { kind: error.kind, message: error.message, ...error.options };
  return { kind: "internal" as const, message: "The model failed to answer" };
}
