// biome-ignore-all lint/suspicious/noExplicitAny: response bodies in tests are read loosely; the assertions check them.
/**
 * Helpers for the agents tests: JSON calls as a user (tests/helpers/users.ts), scripted agent models that
 * record what they were asked, and a WebSocket client for /v1/chat that collects frames.
 */
import { type Context, fauxAssistantMessage, type StreamOptions } from "@mariozechner/pi-ai";
import type { TestApp } from "./app.ts";
import { scriptedModel } from "./faux.ts";
import { USER_HEADER } from "./users.ts";

export function as(t: TestApp, user?: string) {
  const headers = (extra: Record<string, string> = {}) => ({
    "content-type": "application/json",
    ...(user ? { [USER_HEADER]: user } : {}),
    ...extra,
  });
  const call = async <T = any>(method: string, path: string, body?: unknown) => {
    const response = await t.request(path, {
      method,
      headers: headers(),
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as T };
  };
  return {
    get: <T = any>(path: string) => call<T>("GET", path),
    post: <T = any>(path: string, body: unknown) => call<T>("POST", path, body),
    patch: <T = any>(path: string, body: unknown) => call<T>("PATCH", path, body),
    del: <T = any>(path: string) => call<T>("DELETE", path),
  };
}

export interface ModelCall {
  system: string;
  prompt: string;
  temperature?: number;
  signal?: AbortSignal;
}

/** A scripted model for one agent: answers `reply(prompt, callNumber)` and records every call. */
export function agentModel(
  t: TestApp,
  reply: (prompt: string, n: number) => string,
  calls = 40,
  options: { tokensPerSecond?: number } = {},
) {
  const seen: ModelCall[] = [];
  const factory = (context: Context, streamOptions: StreamOptions | undefined) => {
    const last = context.messages.at(-1);
    const prompt = typeof last?.content === "string" ? last.content : "";
    seen.push({
      system: context.systemPrompt ?? "",
      prompt,
      temperature: streamOptions?.temperature,
      signal: streamOptions?.signal,
    });
    return fauxAssistantMessage(reply(prompt, seen.length));
  };
  const model = scriptedModel(
    t.ctx.models,
    Array.from({ length: calls }, () => factory),
    options,
  );
  return { id: model.id, calls: seen, dispose: model.dispose };
}

export type Frame = Record<string, any> & { type: string };

export interface ChatClient {
  frames: Frame[];
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves with the first frame (from `from`) that matches. */
  next(match: (f: Frame) => boolean, from?: number): Promise<Frame>;
  send(data: unknown): void;
  /** Sends a message and resolves with every frame of its reply (through is_complete or response). */
  ask(content: string, context?: Record<string, unknown>): Promise<Frame[]>;
  close(): void;
}

export async function chat(
  baseUrl: string,
  query: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<ChatClient> {
  const url = `${baseUrl.replace(/^http/, "ws")}/v1/chat?${new URLSearchParams(query)}`;
  const ws = new WebSocket(url, { headers } as unknown as string[]);
  const frames: Frame[] = [];
  const waiters: (() => void)[] = [];
  ws.onmessage = (event) => {
    frames.push(JSON.parse(String(event.data)));
    for (const wake of waiters.splice(0)) wake();
  };
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.onclose = (event) => {
      resolve({ code: event.code, reason: event.reason });
      for (const wake of waiters.splice(0)) wake();
    };
  });
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error("WebSocket failed to open"));
  });
  const next = async (match: (f: Frame) => boolean, from = 0): Promise<Frame> => {
    for (;;) {
      const found = frames.slice(from).find(match);
      if (found) return found;
      if (ws.readyState === WebSocket.CLOSED)
        throw new Error(`socket closed; frames: ${JSON.stringify(frames)}`);
      await new Promise<void>((wake) => waiters.push(wake));
    }
  };
  const send = (data: unknown) => ws.send(typeof data === "string" ? data : JSON.stringify(data));
  return {
    frames,
    closed,
    next,
    send,
    async ask(content, context) {
      const from = frames.length;
      send({ type: "message", content, ...(context ? { context } : {}) });
      const last = await next(
        (f) => (f.type === "stream" && f.is_complete) || f.type === "response" || f.type === "error",
        from,
      );
      return frames.slice(from, frames.indexOf(last) + 1);
    },
    close: () => ws.close(),
  };
}

/** Who spoke, in order, from the stream frames of one reply (consecutive duplicates collapsed). */
export function speakers(frames: Frame[]): string[] {
  const names: string[] = [];
  for (const f of frames) {
    if (f.type !== "stream" || f.is_complete) continue;
    const name = `${f.metadata.agent_name}:${f.metadata.phase}`;
    if (names.at(-1) !== name) names.push(name);
  }
  return names;
}

/** The text each agent contributed, keyed by `name:phase`. */
export function contributions(frames: Frame[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of frames) {
    if (f.type !== "stream" || f.is_complete) continue;
    const key = `${f.metadata.agent_name}:${f.metadata.phase}`;
    out[key] = (out[key] ?? "") + f.chunk;
  }
  return out;
}
