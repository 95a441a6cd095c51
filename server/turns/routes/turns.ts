/**
 * Executing turns and cancelling runs. The turn POST answers an SSE stream at once (spec "Turn
 * response"): spec events each followed by their compatibility chunks, or with `?format=ui-message-stream`
 * only UIMessageChunk shapes (docs/design.md §10). Its Idempotency-Key header and body are checked by
 * their schemas before streaming (envelope.ts gives their failures the contract's codes).
 */
import { Elysia } from "elysia";
import { TurnsError } from "../../../schemas/common.ts";
import { TurnStreamEvent, UIMessageChunk } from "../../../schemas/turn-stream.ts";
import {
  Cancellation,
  RunParams,
  RunsByKey,
  RunsByKeyQuery,
  SessionParams,
  TurnHeaders,
  TurnQuery,
  TurnRequest,
} from "../../../schemas/turns.ts";
import type { AppContext } from "../../context.ts";
import { AppError } from "../../http/errors.ts";
import { sseResponse } from "../../http/sse.ts";
import type { TurnService } from "../services/turn-start.ts";

const tags = ["turns"];

/** What the stream says when it fails past its start (the turn itself is not affected). */
const STREAM_FAILED = {
  event: "turn_error",
  data: { type: "turn_error", message: "The turn stream failed", code: "execution_failed", durationMs: 0 },
};

/**
 * Before validation: Elysia's normalizer copies an array-like object (`{"0": {...}, "length": 1}`) into an
 * array, or a string into an array of its characters, before the schema sees it; either is malformed.
 */
function refuseArrayLikeSelections(body: unknown): void {
  const selections = (body as { skill_selections?: unknown } | null)?.skill_selections;
  if (selections !== undefined && !Array.isArray(selections))
    throw new AppError("invalid", "skill_selections must be an array", { code: "invalid_skill_selection" });
}

export function turnRoutes(ctx: AppContext, { turns }: { turns: TurnService }) {
  return new Elysia({ name: "atrium/turns/turns" })
    .use(ctx.identity)
    .guard({ owner: true })
    .post(
      "/api/sessions/:session_id/turns",
      async ({ owner, params, headers, body, query, request }) => {
        const frames = await turns.start(
          { owner, sessionId: params.session_id, key: headers["idempotency-key"], body },
          query.format ?? "events",
          ctx.shutdown,
        );
        // Not ended by the server's shutdown signal: at shutdown the turn fails with `server_stopping`
        // and the stream ends with that terminal event and [DONE], within the server's grace period.
        return sseResponse(frames, {
          signal: request.signal,
          done: true,
          headers: { "x-ai-ui-message-stream": "v1" },
          onError: (error) => {
            ctx.log.error("turn stream failed", { error });
            return [STREAM_FAILED];
          },
        });
      },
      {
        transform: ({ body }) => refuseArrayLikeSelections(body),
        params: SessionParams,
        headers: TurnHeaders,
        body: TurnRequest,
        query: TurnQuery,
        detail: {
          summary: "Execute one idempotent Turn (SSE stream)",
          description:
            "Requires the Idempotency-Key header. Answers text/event-stream at once with the x-ai-ui-message-stream header. Default form: each spec event as `event: <type>` + `data: {type, ...}`, followed by its UIMessageChunk compatibility frames. `?format=ui-message-stream`: only UIMessageChunk frames (spec events without a UI chunk become `data-<type>` parts). Both end with `data: [DONE]`.",
          tags,
          responses: {
            200: {
              description: "SSE stream of TurnStreamEvent frames and UIMessageChunk frames",
              content: {
                "text/event-stream": { schema: { oneOf: [TurnStreamEvent, UIMessageChunk] } as never },
              },
            },
            400: {
              description:
                "idempotency_key_required (missing Idempotency-Key), invalid_idempotency_key, invalid_model (not a provider/model id) or model_not_allowed (a model this server does not offer for turns)",
              content: { "application/json": { schema: TurnsError as never } },
            },
            422: {
              description: "invalid_request, or invalid_skill_selection",
              content: { "application/json": { schema: TurnsError as never } },
            },
          },
        },
      },
    )
    .get("/api/runs", ({ owner, query }) => turns.byKey(owner, query.idempotency_key), {
      query: RunsByKeyQuery,
      response: { 200: RunsByKey },
      detail: {
        summary: "The caller's runs under an Idempotency-Key, in any session (newest first)",
        description:
          "Where a turn posted with this key ran: a client that keeps only its key finds the session, and posting the same key and body there again replays the turn. At most 20; an empty list when none.",
        tags,
      },
    })
    .put(
      "/api/runs/:run_id/cancellation",
      async ({ owner, params, set }) => {
        const { accepted, view } = await turns.cancel(owner, params.run_id);
        if (accepted) set.status = 202;
        return view;
      },
      {
        params: RunParams,
        response: { 200: Cancellation, 202: Cancellation, 404: TurnsError },
        detail: { summary: "Request durable cancellation of an owned Run", tags },
      },
    );
}
