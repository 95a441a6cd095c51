/**
 * The chat family's turn and session routes (thin: validation, identity, mapping to the services):
 * POST /api/chat and /api/post-chat (NDJSON), /api/attach (SSE), sessions, abort, question, account,
 * runs and provenance. Catalog routes are in catalog-routes.ts.
 */
import { Elysia, type Static } from "elysia";
import {
  Aborted,
  AccountErased,
  AttachStream,
  ChatRequest,
  ChatStream,
  Hydrated,
  NewSession,
  Provenance,
  ProvenanceQuery,
  QuestionAnswer,
  QuestionAnswered,
  QuestionMissing,
  RunBody,
  Runs,
  RunsQuery,
  SessionDeleted,
  SessionDeleteMissing,
  SessionList,
  SessionRef,
  SessionsQuery,
} from "../../schemas/chat.ts";
import { ChatError } from "../../schemas/common.ts";
import type { AppContext } from "../context.ts";
import { requestOrShutdown } from "../http/abort.ts";
import { ndjsonResponse } from "../http/ndjson.ts";
import { pageOf } from "../http/paging.ts";
import { sseResponse } from "../http/sse.ts";
import type { ChatEvent } from "./runtime/events.ts";
import type { ChatOutcome } from "./services/chat.ts";
import type { ChatServices } from "./services/index.ts";

const tags = ["chat"];

interface TurnSubmission {
  body: Static<typeof ChatRequest>;
  owner: string;
  request: Request;
}

export function chatRoutes(ctx: AppContext, services: ChatServices) {
  const streamOf = (outcome: ChatOutcome, request: Request) => {
    const signal = requestOrShutdown(request, ctx.shutdown);
    if (outcome.kind === "queued") {
      const event = outcome.event;
      return ndjsonResponse<ChatEvent>(async function* () {
        yield event;
      });
    }
    return ndjsonResponse(outcome.producer, {
      signal,
      onError: (error): ChatEvent[] => [
        { type: "error", message: error instanceof Error ? error.message : String(error) },
      ],
    });
  };
  const streamDoc = { 200: ChatStream, 400: ChatError, 409: ChatError };
  // POST /api/chat and its companion /api/post-chat are one handler.
  const submitTurn = async ({ body, owner, request }: TurnSubmission) =>
    streamOf(await services.chat.chat(owner, body), request);

  return new Elysia({ name: "atrium/chat/routes" })
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
      "/api/attach",
      async ({ body, owner, request }) => {
        const header = request.headers.get("last-event-id")?.trim();
        const lastEventId = header && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
        const producer = await services.attach.attach(owner, body, lastEventId);
        return sseResponse(producer, { signal: requestOrShutdown(request, ctx.shutdown) });
      },
      {
        body: SessionRef,
        response: { 200: AttachStream, 400: ChatError, 404: ChatError },
        detail: { summary: "Companion route: attach to a session's live events (SSE)", tags },
      },
    )
    .post("/api/chat/new", async ({ owner }) => services.sessions.create(owner), {
      response: { 200: NewSession },
      detail: { summary: "Create a chat session", tags },
    })
    .post("/api/chat/resume", ({ body, owner }) => services.sessions.hydrate(owner, body), {
      body: SessionRef,
      response: { 200: Hydrated, 400: ChatError },
      detail: { summary: "Resume a chat session (a lost one comes back fresh with sessionReset)", tags },
    })
    .get("/api/chat/session", ({ query, owner }) => services.sessions.hydrate(owner, query), {
      query: SessionRef,
      response: { 200: Hydrated, 400: ChatError },
      detail: { summary: "Hydrate a chat session: session, messages, sessionReset", tags },
    })
    .get("/api/chat/sessions", ({ query, owner }) => services.sessions.list(owner, pageOf(query)), {
      query: SessionsQuery,
      response: { 200: SessionList },
      detail: { summary: "List chat sessions, newest first", tags },
    })
    .delete(
      "/api/chat/session",
      async ({ query, owner, status }) => {
        const result = await services.sessions.remove(owner, query);
        return result.ok ? result : status(404, result);
      },
      {
        query: SessionRef,
        response: { 200: SessionDeleted, 404: SessionDeleteMissing, 501: ChatError },
        detail: { summary: "Delete a session with its runs, tool output, file mutations and file", tags },
      },
    )
    .post("/api/chat/abort", ({ body, owner }) => services.sessions.abort(owner, body), {
      body: SessionRef,
      response: { 200: Aborted },
      detail: { summary: "Abort the session's running turn", tags },
    })
    .delete("/api/chat/account", ({ owner }) => services.sessions.eraseAccount(owner), {
      response: { 200: AccountErased },
      detail: { summary: "Erase every mirrored session and stored provider key of the caller", tags },
    })
    .post(
      "/api/chat/question",
      ({ body, owner, status }) => {
        const result = services.sessions.answer(owner, body);
        return result.status === 200 ? result.body : status(404, result.body);
      },
      {
        body: QuestionAnswer,
        response: { 200: QuestionAnswered, 400: ChatError, 404: QuestionMissing },
        detail: { summary: "Answer (or skip) a question the model asked", tags },
      },
    )
    .get(
      "/api/chat/runs",
      ({ query, owner }) => services.provenance.runs(owner, query.sessionId, pageOf(query)),
      {
        query: RunsQuery,
        response: { 200: Runs, 400: ChatError },
        detail: { summary: "List the recorded runs of a session, newest first", tags },
      },
    )
    .post(
      "/api/chat/run",
      async ({ body, owner, request }) => streamOf(await services.chat.rerun(owner, body.runId), request),
      {
        body: RunBody,
        response: { ...streamDoc, 404: ChatError },
        detail: { summary: "Re-execute a recorded run's prompt as a new run (NDJSON)", tags },
      },
    )
    .get("/api/chat/provenance", ({ query, owner }) => services.provenance.provenance(owner, query.runId), {
      query: ProvenanceQuery,
      response: { 200: Provenance, 400: ChatError, 404: ChatError },
      detail: { summary: "Provenance of a run: model, settings, tool calls, files touched, timings", tags },
    });
}
