/**
 * Sessions, turns and run cancellation: thin routes over TurnStore and TurnService. The turn POST answers
 * an SSE stream at once (spec "Turn response"): spec events each followed by their compatibility chunks,
 * or with `?format=ui-message-stream` only UIMessageChunk shapes (DESIGN.md ruling 10).
 */
import { Elysia } from "elysia";
import { TurnsError } from "../../schemas/common.ts";
import {
  Cancellation,
  RunParams,
  Session,
  SessionCreate,
  SessionList,
  SessionListQuery,
  SessionParams,
  SessionPatch,
  TurnHistory,
  TurnQuery,
  TurnRequest,
  TurnStreamEvent,
  UIMessageChunk,
} from "../../schemas/turns.ts";
import type { AppContext } from "../context.ts";
import { AppError } from "../http/errors.ts";
import { pageOf } from "../http/paging.ts";
import { type SseFrame, sseResponse } from "../http/sse.ts";
import { newId } from "../lib/ids.ts";
import { CompatEncoder, type TurnEvent } from "./events.ts";
import { turnRecord } from "./history.ts";
import type { TurnServices } from "./services.ts";
import type { SessionRow } from "./store.ts";
import { parseSkillSelections } from "./turn-input.ts";
import { TurnService } from "./turn-service.ts";

const sessionView = (r: SessionRow) => ({
  id: r.id,
  title: r.title,
  archived: r.archived === 1,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const tags = ["turns"];

function frames(
  events: AsyncIterable<TurnEvent>,
  compatOnly: boolean,
): (signal: AbortSignal) => AsyncIterable<SseFrame> {
  return async function* () {
    const encoder = new CompatEncoder();
    for await (const event of events) {
      if (!compatOnly) yield { event: event.type, data: event };
      for (const chunk of encoder.chunks(event)) yield { data: chunk };
    }
  };
}

export function sessionRoutes(ctx: AppContext, services: TurnServices) {
  const turns = new TurnService(services);
  const { store, analytics } = services;
  return new Elysia({ name: "atrium/turns/sessions" })
    .use(ctx.identity)
    .guard({ owner: true })
    .post(
      "/api/sessions",
      ({ owner, body }) => {
        const row = store.createSession(owner, newId("ses"), body.title);
        analytics.capture("session_created");
        return sessionView(row);
      },
      {
        body: SessionCreate,
        response: { 200: Session, 422: TurnsError },
        detail: { summary: "Create a Session", tags },
      },
    )
    .get(
      "/api/sessions",
      ({ owner: me, query }) => {
        const { limit, offset } = pageOf(query);
        return {
          items: store.sessions(me, limit, offset, query.archived).map(sessionView),
          total: store.countSessions(me, query.archived),
          limit,
          offset,
        };
      },
      {
        query: SessionListQuery,
        response: { 200: SessionList, 422: TurnsError },
        detail: { summary: "List owned Sessions, newest first", tags },
      },
    )
    .get(
      "/api/sessions/:session_id",
      ({ owner, params }) => {
        const row = store.session(owner, params.session_id);
        if (!row) throw AppError.notFound("Session not found");
        return sessionView(row);
      },
      {
        params: SessionParams,
        response: { 200: Session, 404: TurnsError },
        detail: { summary: "Read a Session", tags },
      },
    )
    .patch(
      "/api/sessions/:session_id",
      ({ owner, params, body }) => {
        const row = store.updateSession(owner, params.session_id, body);
        if (!row) throw AppError.notFound("Session not found");
        analytics.capture("session_updated", { archived: row.archived === 1 });
        return sessionView(row);
      },
      {
        params: SessionParams,
        body: SessionPatch,
        response: { 200: Session, 404: TurnsError, 422: TurnsError },
        detail: { summary: "Rename, archive or unarchive a Session", tags },
      },
    )
    .get(
      "/api/sessions/:session_id/turns",
      ({ owner: me, params, query }) => {
        if (!store.session(me, params.session_id)) throw AppError.notFound("Session not found");
        const { limit, offset } = pageOf(query);
        return {
          items: store.committedRuns(me, params.session_id, limit, offset).map(turnRecord),
          limit,
          offset,
        };
      },
      {
        params: SessionParams,
        query: SessionListQuery,
        response: { 200: TurnHistory, 404: TurnsError },
        detail: { summary: "Ordered committed Turn history", tags },
      },
    )
    .post(
      "/api/sessions/:session_id/turns",
      ({ owner: me, params, body, query, request }) => {
        const key = request.headers.get("idempotency-key")?.trim();
        if (!key)
          throw new AppError("invalid", "The Idempotency-Key header is required", {
            status: 400,
            code: "idempotency_key_required",
          });
        if (key.length > 200)
          throw new AppError("invalid", "The Idempotency-Key header is at most 200 characters", {
            status: 400,
            code: "invalid_idempotency_key",
          });
        if (body.text.trim() === "") throw new AppError("invalid", "text must not be empty");
        const input = {
          text: body.text,
          attachment_ids: body.attachment_ids ?? [],
          skill_selections: parseSkillSelections(body.skill_selections),
        };
        // Not ended by the server's shutdown signal: at shutdown the turn fails with `server_stopping`
        // and the stream ends with that terminal event and [DONE], within the server's grace period.
        const signal = request.signal;
        const events = turns.open(me, params.session_id, key, input, signal, ctx.shutdown);
        return sseResponse(frames(events, query.format === "ui-message-stream"), {
          signal,
          done: true,
          headers: { "x-ai-ui-message-stream": "v1" },
          onError: (error) => {
            ctx.log.error("turn stream failed", { error });
            return [
              {
                event: "turn_error",
                data: {
                  type: "turn_error",
                  message: "The turn stream failed",
                  code: "execution_failed",
                  durationMs: 0,
                },
              },
            ];
          },
        });
      },
      {
        params: SessionParams,
        body: TurnRequest,
        query: TurnQuery,
        detail: {
          summary: "Execute one idempotent Turn (SSE stream)",
          description:
            "Requires the Idempotency-Key header. Answers text/event-stream at once with the x-ai-ui-message-stream header. Default form: each spec event as `event: <type>` + `data: {type, ...}`, followed by its UIMessageChunk compatibility frames. `?format=ui-message-stream`: only UIMessageChunk frames (spec events without a UI chunk become `data-<type>` parts). Both end with `data: [DONE]`.",
          tags,
          parameters: [{ in: "header", name: "Idempotency-Key", required: true, schema: { type: "string" } }],
          responses: {
            200: {
              description: "SSE stream of TurnStreamEvent frames and UIMessageChunk frames",
              content: {
                "text/event-stream": { schema: { oneOf: [TurnStreamEvent, UIMessageChunk] } as never },
              },
            },
            400: {
              description: "missing Idempotency-Key",
              content: { "application/json": { schema: TurnsError as never } },
            },
            422: {
              description: "invalid request or invalid_skill_selection",
              content: { "application/json": { schema: TurnsError as never } },
            },
          },
        },
      },
    )
    .put(
      "/api/runs/:run_id/cancellation",
      ({ owner: me, params, set }) => {
        const run = store.run(me, params.run_id);
        if (!run) throw AppError.notFound("Run not found");
        analytics.capture("run_cancellation_requested");
        if (run.status !== "running") return { runId: run.id, status: run.status };
        store.requestCancel(run.id);
        services.live.get(run.id)?.controller.abort("cancelled");
        set.status = 202;
        return { runId: run.id, status: "cancelling" as const };
      },
      {
        params: RunParams,
        response: { 200: Cancellation, 202: Cancellation, 404: TurnsError },
        detail: { summary: "Request durable cancellation of an owned Run", tags },
      },
    );
}
