/**
 * An OpenAI-compatible provider on a loopback port for the OpenAI-endpoint tests, registered in the
 * app's model layer as `scripted-up/model` (pi-ai's real HTTP adapter talks to it). It records each
 * request body and answers with the next scripted reply: text, or tool calls; a reply may be slow (a
 * word every `delayMs`) so a test can abandon it midway and see the provider request end.
 */

import { openAiCompatibleModel } from "../../server/models/compatible.ts";
import type { TestApp } from "../helpers/app.ts";

export type ScriptedReply =
  | { text: string; delayMs?: number }
  | { toolCalls: { id: string; name: string; arguments: string }[] };

export interface Upstream {
  id: string;
  requests: Record<string, unknown>[];
  replies: ScriptedReply[];
  /** Requests whose response stream was cancelled by the caller before it ended. */
  abandoned: number;
  stop(): void;
}

export function upstreamProvider(t: TestApp): Upstream {
  const state: Upstream = {
    id: "scripted-up/model",
    requests: [],
    replies: [],
    abandoned: 0,
    stop: () => {},
  };
  const chunk = (delta: object, finish: string | null = null, usage?: object) =>
    `data: ${JSON.stringify({ id: "u1", object: "chat.completion.chunk", created: 1, model: "model", choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 30,
    async fetch(request) {
      state.requests.push((await request.json()) as Record<string, unknown>);
      const reply = state.replies.shift() ?? { text: "ok" };
      const usage = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 };
      if ("toolCalls" in reply) {
        const calls = reply.toolCalls.map((c, index) => ({
          index,
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: c.arguments },
        }));
        const text = `${chunk({ role: "assistant", tool_calls: calls })}${chunk({}, "tool_calls")}${chunk({}, null, usage).replace('"choices":[{"index":0,"delta":{},"finish_reason":null}]', '"choices":[]')}data: [DONE]\n\n`;
        return new Response(text, { headers: { "content-type": "text/event-stream" } });
      }
      const words = reply.text.match(/\S+\s*/g) ?? [];
      const encoder = new TextEncoder();
      let cancelled = false;
      const body = new ReadableStream({
        async start(controller) {
          controller.enqueue(encoder.encode(chunk({ role: "assistant", content: "" })));
          for (const word of words) {
            if (cancelled) return;
            if (reply.delayMs) await Bun.sleep(reply.delayMs);
            if (cancelled) return;
            controller.enqueue(encoder.encode(chunk({ content: word })));
          }
          controller.enqueue(encoder.encode(chunk({}, "stop")));
          controller.enqueue(
            encoder.encode(
              `data: ${JSON.stringify({ id: "u1", object: "chat.completion.chunk", created: 1, model: "model", choices: [], usage })}\n\n`,
            ),
          );
          controller.enqueue(encoder.encode("data: [DONE]\n\n"));
          controller.close();
        },
        cancel() {
          cancelled = true;
          state.abandoned++;
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
  const model = openAiCompatibleModel({
    id: "model",
    name: "Scripted upstream",
    provider: "scripted-up",
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
  });
  t.ctx.models.register({ ...model, input: ["text", "image"] }, { apiKey: "upstream-key" });
  state.stop = () => {
    t.ctx.models.unregister(state.id);
    server.stop(true);
  };
  return state;
}
