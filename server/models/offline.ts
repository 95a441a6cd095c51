/**
 * The built-in `offline` model, used when no provider is configured. Registered with pi-ai like any
 * provider, so every family streams it through the same path. Deterministic and instant: it says
 * honestly that no model is configured and how to configure one (what the API really does: a stored
 * key works at once, a variable needs a restart; no menu is named), quoting the request it received.
 */
import type {
  AssistantMessage,
  AssistantMessageEventStream,
  Context,
  Model,
  StreamOptions,
} from "@mariozechner/pi-ai";
import { PROVIDERS } from "./catalog.ts";

/** pi-ai's module, handed in by pi-ai.ts as it loads it (importing that file here would be a cycle). */
type PiAi = typeof import("@mariozechner/pi-ai");

export const OFFLINE_API = "atrium-offline";

export const offlineModel: Model<string> = {
  id: "offline",
  name: "Offline (no model configured)",
  api: OFFLINE_API,
  provider: "offline",
  baseUrl: "offline:",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 8192,
};

const QUOTE_LIMIT = 200;

/** The full reply for a context: the same context always gives the same text. */
export function offlineReply(context: Context): string {
  return offlineAnswer(lastUserText(context));
}

/** The full reply to one message's text (turns ask with the text alone, no message list). */
export function offlineAnswer(text: string): string {
  const providers = PROVIDERS.map((p) => `  - ${p.envVarName} for ${p.name}`).join("\n");
  const asked = text.trim().replace(/\s+/g, " ");
  const quote = asked
    ? `\n\nYour message was: "${asked.length > QUOTE_LIMIT ? `${asked.slice(0, QUOTE_LIMIT)}…` : asked}"`
    : "";
  return `No model is configured, so Atrium's built-in offline model is answering. It cannot reason, call tools or answer questions; it can only tell you how to connect a real model.

Any of these works:
- In the web UI (/app/): open Settings → Providers and save a key, or pick a local Ollama model from the "Set up a model" card above the chat. The next message uses it; no restart needed.
- Over the API: POST /api/chat/providers with {"provider": "openai", "apiKey": "..."} (Swagger UI at /swagger lets you try it).
- Or set a provider variable in the environment Atrium starts with (or its .env file), then start Atrium again:
${providers}

To choose a model, pick it in the Model menu above the chat, name it as provider/model in the request (for example openai/gpt-5-mini), or set defaultProvider and defaultModel with POST /api/chat/settings.${quote}`;
}

function lastUserText(context: Context): string {
  for (let i = context.messages.length - 1; i >= 0; i--) {
    const message = context.messages[i];
    if (message?.role !== "user") continue;
    const text =
      typeof message.content === "string"
        ? message.content
        : message.content.map((part) => (part.type === "text" ? part.text : "")).join(" ");
    return text;
  }
  return "";
}

/** Splits text into chunks of a few words (whitespace kept), the unit the model streams. */
export function chunkText(text: string, wordsPerChunk = 4): string[] {
  const words = text.match(/\S+\s*/g) ?? [];
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += wordsPerChunk)
    chunks.push(words.slice(i, i + wordsPerChunk).join(""));
  return chunks;
}

function streamOffline(
  pi: PiAi,
  model: Model<string>,
  context: Context,
  options?: StreamOptions,
): AssistantMessageEventStream {
  const stream = pi.createAssistantMessageEventStream();
  const text = offlineReply(context);
  const promptChars = JSON.stringify(context.messages).length + (context.systemPrompt?.length ?? 0);
  const message: AssistantMessage = {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: {
      input: Math.ceil(promptChars / 4),
      output: Math.ceil(text.length / 4),
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: Math.ceil(promptChars / 4) + Math.ceil(text.length / 4),
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "stop",
    timestamp: Date.now(),
  };
  queueMicrotask(async () => {
    const part = { type: "text" as const, text: "" };
    const partial = () => ({ ...message, content: [{ ...part }] });
    stream.push({ type: "start", partial: { ...message } });
    stream.push({ type: "text_start", contentIndex: 0, partial: partial() });
    for (const chunk of chunkText(text)) {
      await Promise.resolve();
      if (options?.signal?.aborted) {
        const aborted: AssistantMessage = {
          ...partial(),
          stopReason: "aborted",
          errorMessage: "Request was aborted",
        };
        stream.push({ type: "error", reason: "aborted", error: aborted });
        stream.end(aborted);
        return;
      }
      part.text += chunk;
      stream.push({ type: "text_delta", contentIndex: 0, delta: chunk, partial: partial() });
    }
    stream.push({ type: "text_end", contentIndex: 0, content: text, partial: partial() });
    const final: AssistantMessage = { ...message, content: [{ type: "text", text }] };
    stream.push({ type: "done", reason: "stop", message: final });
    stream.end(final);
  });
  return stream;
}

/** Registers the offline API with pi-ai's registry (once per process; pi-ai.ts calls it as pi-ai loads). */
export function registerOfflineProvider(pi: PiAi): void {
  if (pi.getApiProvider(OFFLINE_API)) return;
  const stream = (model: Model<string>, context: Context, options?: StreamOptions) =>
    streamOffline(pi, model, context, options);
  pi.registerApiProvider({ api: OFFLINE_API, stream, streamSimple: stream }, "atrium-offline");
}
