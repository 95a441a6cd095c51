/**
 * The chat routes that answer with a stream: POST /api/chat and its companion
 * /api/post-chat (one handler, NDJSON), POST /api/chat/run (re-run a recorded run, NDJSON) and
 * /api/attach (a session's live events, SSE). Thin: validated input, one service call, the stream.
 */
import { Elysia, type Static } from "elysia";
import { AttachStream, ChatRequest, ChatStream, RunBody, SessionRef } from "../../../schemas/chat.ts";
import { ChatError } from "../../../schemas/common.ts";
import type { AppContext } from "../../context.ts";
import { requestOrShutdown } from "../../http/abort.ts";
import { ndjsonResponse } from "../../http/ndjson.ts";
import { sseResponse } from "../../http/sse.ts";
import type { ChatAttachService } from "../services/attach.ts";
import type { ChatEvent, ChatOutcome, ChatService } from "../services/chat.ts";

const tags = ["chat"];

interface ChatSubmission {
  body: Static<typeof ChatRequest>;
  owner: string;
  request: Request;
}

export function chatStreamRoutes(
  ctx: AppContext,
  { chat, attach }: { chat: ChatService; attach: ChatAttachService },
) {
  // A queued request answers its one `queue` event; a run streams until its terminal event, and an
  // error escaping the run becomes the stream's last `error` line.
  const streamOf = (outcome: ChatOutcome, request: Request) => {
    if (outcome.kind === "queued") {
      const event = outcome.event;
      return ndjsonResponse<ChatEvent>(async function* () {
        yield event;
      });
    }
    return ndjsonResponse(outcome.producer, {
      signal: requestOrShutdown(request, ctx.shutdown),
      onError: (error): ChatEvent[] => [
        { type: "error", message: error instanceof Error ? error.message : String(error) },
      ],
    });
  };
  const streamDoc = { 200: ChatStream, 400: ChatError, 409: ChatError };
  const submitTurn = async ({ body, owner, request }: ChatSubmission) =>
    streamOf(await chat.chat(owner, body), request);

  return new Elysia({ name: "atrium/chat/turns" })
    .use(ctx.identity)
    .guard({ owner: true })
    .post("/api/chat", submitTurn, {
      body: ChatRequest,
      response: streamDoc,
      detail: { summary: "Stream an assistant turn as NDJSON", tags },
    })
    .post("/api/post-chat", submitTurn, {
      body: ChatRequest,
      response: streamDoc,
      detail: { summary: "Companion route: submit a turn, same NDJSON stream as /api/chat", tags },
    })
    .post(
      "/api/chat/run",
      async ({ body, owner, request }) => streamOf(await chat.rerun(owner, body.runId), request),
      {
        body: RunBody,
        response: { ...streamDoc, 404: ChatError },
        detail: { summary: "Re-execute a recorded run's prompt as a new run (NDJSON)", tags },
      },
    )
    .post(
      "/api/attach",
      async ({ body, owner, request }) => {
        const producer = await attach.attach(owner, body, lastEventIdOf(request));
        return sseResponse(producer, { signal: requestOrShutdown(request, ctx.shutdown) });
      },
      {
        body: SessionRef,
        response: { 200: AttachStream, 400: ChatError, 404: ChatError },
        detail: { summary: "Companion route: attach to a session's live events (SSE)", tags },
      },
    );
}

/** The SSE resume point a reconnecting client sends; anything but a plain number is no resume point. */
function lastEventIdOf(request: Request): number | undefined {
  const header = request.headers.get("last-event-id")?.trim();
  return header && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
}
