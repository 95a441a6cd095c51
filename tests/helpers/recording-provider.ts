/**
 * A model provider on a loopback port that records what it is sent, as a real provider would see it: an
 * OpenAI-compatible chat-completions server that answers every request with one short streamed reply.
 * An owner's pi `models.json` (in their agent dir) points a custom provider at it, so a chat turn goes
 * through pi and pi-ai's real HTTP adapter; a test then reads the system prompt and messages the
 * "provider" received.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const RECORDER_MODEL = "recorder/recorder-model";

export interface RecordedRequest {
  /** The raw request body, exactly as it crossed the socket. */
  raw: string;
  /** The system (or developer) message's text. */
  system: string;
  /** Every user message's text, in order. */
  user: string[];
}

export interface RecordingProvider {
  requests: RecordedRequest[];
  /** Writes `models.json` into an agent dir, naming this server (model `RECORDER_MODEL`). */
  configure(agentDir: string): void;
  stop(): void;
}

type Message = { role: string; content: string | { type: string; text?: string }[] };
const textOf = (content: Message["content"]) =>
  typeof content === "string" ? content : content.map((part) => part.text ?? "").join("");

export function recordingProvider(reply = "noted"): RecordingProvider {
  const requests: RecordedRequest[] = [];
  const frame = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({
      id: "r1",
      object: "chat.completion.chunk",
      created: 1,
      model: "recorder-model",
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const raw = await request.text();
      const body = JSON.parse(raw) as { messages: Message[] };
      requests.push({
        raw,
        system: body.messages
          .filter((m) => m.role === "system" || m.role === "developer")
          .map((m) => textOf(m.content))
          .join("\n"),
        user: body.messages.filter((m) => m.role === "user").map((m) => textOf(m.content)),
      });
      const text = `${frame({ role: "assistant", content: reply })}${frame({}, "stop")}data: [DONE]\n\n`;
      return new Response(text, { headers: { "content-type": "text/event-stream" } });
    },
  });
  return {
    requests,
    configure(agentDir) {
      mkdirSync(agentDir, { recursive: true });
      writeFileSync(
        join(agentDir, "models.json"),
        JSON.stringify({
          providers: {
            recorder: {
              baseUrl: `http://127.0.0.1:${server.port}/v1`,
              api: "openai-completions",
              apiKey: "recorder-key",
              compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
              models: [{ id: "recorder-model", name: "Recorder" }],
            },
          },
        }),
      );
    },
    stop: () => server.stop(true),
  };
}
