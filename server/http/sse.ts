/**
 * Server-Sent Events: `text/event-stream`, `event:` + `data:` frames, comment heartbeats while idle,
 * optionally a raw `data: [DONE]` frame last.
 */
import { type Producer, type StreamOptions, streamResponse } from "./stream.ts";

export interface SseFrame {
  event?: string;
  /** Serialised as JSON unless it is a string. */
  data: unknown;
  /** Lets a client resume with `Last-Event-ID`. */
  id?: string;
  retry?: number;
}

export interface SseOptions
  extends Pick<StreamOptions<SseFrame>, "signal" | "onError" | "headers" | "status"> {
  /** Idle time before a `: keep-alive` comment is sent (default 15 s; 0 disables). */
  heartbeatMs?: number;
  /** End with `data: [DONE]`. */
  done?: boolean;
}

export const SSE_HEARTBEAT = ": keep-alive\n\n";
export const SSE_DONE = "data: [DONE]\n\n";

export function encodeSse(frame: SseFrame): string {
  let out = "";
  if (frame.id !== undefined) out += `id: ${frame.id.replace(/[\r\n]/g, "")}\n`;
  if (frame.event !== undefined) out += `event: ${frame.event.replace(/[\r\n]/g, "")}\n`;
  if (frame.retry !== undefined) out += `retry: ${frame.retry}\n`;
  const data = typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data);
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

export function sseResponse(produce: Producer<SseFrame>, options: SseOptions = {}): Response {
  const { heartbeatMs = 15_000, done = false, ...rest } = options;
  return streamResponse(produce, {
    ...rest,
    contentType: "text/event-stream; charset=utf-8",
    encode: encodeSse,
    heartbeatMs,
    heartbeat: SSE_HEARTBEAT,
    trailer: done ? SSE_DONE : undefined,
  });
}
