/**
 * Chat test helpers: scripted pi-ai faux models (with a chosen context window, for compaction), NDJSON
 * and SSE readers over real responses, and a chat request shortcut.
 */
import { type FauxResponseStep, registerFauxProvider } from "@mariozechner/pi-ai";
import { postJson, type TestApp } from "../helpers/app.ts";
import { readChunks } from "../helpers/listen.ts";

export interface Scripted {
  id: string;
  append(responses: FauxResponseStep[]): void;
  pending(): number;
  calls(): number;
  dispose(): void;
}

let counter = 0;

export function scripted(
  t: TestApp,
  responses: FauxResponseStep[],
  options: { tokensPerSecond?: number; reasoning?: boolean; contextWindow?: number } = {},
): Scripted {
  const provider = `chatfaux${++counter}`;
  const registration = registerFauxProvider({
    provider,
    models: [{ id: "scripted", reasoning: options.reasoning ?? false, contextWindow: options.contextWindow }],
    tokensPerSecond: options.tokensPerSecond,
  });
  registration.setResponses(responses);
  const id = t.ctx.models.register(registration.getModel());
  return {
    id,
    append: (more) => registration.appendResponses(more),
    pending: () => registration.getPendingResponseCount(),
    calls: () => registration.state.callCount,
    dispose() {
      t.ctx.models.unregister(id);
      registration.unregister();
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: events are checked field by field in the tests
export type Event = Record<string, any>;

export function chat(t: TestApp, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return t.request("/api/chat", postJson(body, headers));
}

/** Every NDJSON line of a response. */
export async function lines(response: Response): Promise<Event[]> {
  const out: Event[] = [];
  if (!response.body) return out;
  for await (const line of readChunks(response.body)) if (line.trim()) out.push(JSON.parse(line));
  return out;
}

/** Reads NDJSON events one at a time, so a test can act in the middle of a stream. */
export function eventReader(response: Response) {
  if (!response.body) throw new Error("no body");
  const iterator = readChunks(response.body)[Symbol.asyncIterator]();
  const seen: Event[] = [];
  return {
    seen,
    async next(): Promise<Event | undefined> {
      for (;;) {
        const { value, done } = await iterator.next();
        if (done) return undefined;
        if (value.trim()) {
          const event = JSON.parse(value) as Event;
          seen.push(event);
          return event;
        }
      }
    },
    /** Reads until an event matches; returns it. */
    async until(match: (e: Event) => boolean): Promise<Event> {
      for (;;) {
        const event = await this.next();
        if (!event)
          throw new Error(`stream ended before a matching event; saw ${seen.map((e) => e.type).join(",")}`);
        if (match(event)) return event;
      }
    },
    async rest(): Promise<Event[]> {
      while (await this.next()) {}
      return seen;
    },
    cancel: () => iterator.return?.(undefined),
  };
}

export const types = (events: Event[]) => events.map((e) => e.type);
