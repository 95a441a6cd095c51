/**
 * A scripted OpenAI-compatible server on a real local port: `POST /v1/chat/completions` streams SSE
 * chunks (or fails) as a test's `reply(request)` decides, and `POST /v1/embeddings` answers vectors from
 * a test's `embed(texts)`. Every request is recorded, so tests see what the app really sent.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/app.ts";

/** Writes the repository's policy naming `model` as the embeddings model at `path` (the endpoint's
 * address is the environment's `APP_EMBEDDINGS_BASE_URL`). */
export function writeEmbeddingsPolicy(path: string, model = "fake-embed"): string {
  const policy = readFileSync(join(REPO_ROOT, "config", "policy.toml"), "utf8");
  writeFileSync(path, policy.replace('embeddings_model = ""', `embeddings_model = "${model}"`));
  return path;
}

export interface ChatRequest {
  model: string;
  stream: boolean;
  messages: { role: string; content: unknown }[];
}

/** What the fake answers one chat request with. */
export type Reply =
  | { text: string }
  /** Streams these pieces, then breaks the connection (a provider dying mid-answer). */
  | { pieces: string[]; thenBreak: true }
  | { status: number; message: string };

export interface FakeOptions {
  reply: (request: ChatRequest, text: string) => Reply;
  embed?: (texts: string[], model: string) => number[][] | { status: number; message: string };
}

export interface FakeServer {
  url: string;
  chats: { request: ChatRequest; text: string }[];
  embeddings: { input: string[]; model: string; authorization: string | null }[];
  stop(): Promise<void>;
}

/** All the text of a request's messages (system prompt first), for deciding what is being asked. */
export function requestText(request: ChatRequest): string {
  return request.messages
    .map((m) =>
      typeof m.content === "string"
        ? m.content
        : Array.isArray(m.content)
          ? (m.content as { text?: string }[]).map((p) => p.text ?? "").join("")
          : "",
    )
    .join("\n");
}

function chunk(delta: object, finish: string | null = null): string {
  const frame = {
    id: "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: 1,
    model: "scripted",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(frame)}\n\n`;
}

/** Text split into a few streamed pieces, as a model streams tokens. */
function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 40) out.push(text.slice(i, i + 40));
  return out.length > 0 ? out : [""];
}

export function startFakeOpenAi(options: FakeOptions): FakeServer {
  const chats: FakeServer["chats"] = [];
  const embeddings: FakeServer["embeddings"] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (request.method === "POST" && path.endsWith("/embeddings") && options.embed) {
        const body = (await request.json()) as { input: string | string[]; model: string };
        const input = Array.isArray(body.input) ? body.input : [body.input];
        embeddings.push({ input, model: body.model, authorization: request.headers.get("authorization") });
        const vectors = options.embed(input, body.model);
        if (!Array.isArray(vectors))
          return Response.json({ error: { message: vectors.message } }, { status: vectors.status });
        return Response.json({
          object: "list",
          model: body.model,
          data: vectors.map((embedding, index) => ({ object: "embedding", index, embedding })),
          usage: { prompt_tokens: 1, total_tokens: 1 },
        });
      }
      if (request.method !== "POST" || !path.endsWith("/chat/completions"))
        return Response.json({ error: { message: `no route ${path}` } }, { status: 404 });
      const body = (await request.json()) as ChatRequest;
      const text = requestText(body);
      chats.push({ request: body, text });
      const reply = options.reply(body, text);
      if ("status" in reply)
        return Response.json(
          { error: { message: reply.message, type: "server_error" } },
          { status: reply.status },
        );
      const frames = "text" in reply ? pieces(reply.text) : reply.pieces;
      const encoder = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(encoder.encode(chunk({ role: "assistant", content: "" })));
          for (const piece of frames) controller.enqueue(encoder.encode(chunk({ content: piece })));
          if ("thenBreak" in reply) {
            // Let the pieces reach the client before the connection drops, as a dying provider's would.
            await Bun.sleep(50);
            controller.error(new Error("connection reset by the fake provider"));
            return;
          }
          controller.enqueue(encoder.encode(chunk({}, "stop")));
          controller.enqueue(encoder.encode("data: [DONE]\n\n"));
          controller.close();
        },
      });
      return new Response(stream, { headers: { "content-type": "text/event-stream" } });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    chats,
    embeddings,
    stop: () => server.stop(true),
  };
}
