/**
 * HTTP routes of the search family (graph search spec, area A): local and global search, their SSE
 * streams (`event: context`, then `event: delta` `{text}` frames, then `event: done` `{response}`),
 * follow-up questions, the debug route that fails on purpose, and the indexing extension.
 * Thin: the schemas validate (Elysia answers FastAPI's 422), each handler calls one service function and
 * maps its answer to JSON or SSE; the work is in SearchQueryService and SearchIndexService.
 */
import { Elysia } from "elysia";
import { DetailError, HTTPValidationError } from "../../../schemas/common.ts";
import {
  DocumentList,
  IndexDocumentParams,
  IndexList,
  IndexParams,
  IndexRequest,
  IndexSummary,
  MonitorDebugOk,
  QuestionsResponse,
  SearchQuery,
  SearchResponse,
} from "../../../schemas/search.ts";
import type { AppContext } from "../../context.ts";
import { requestOrShutdown } from "../../http/abort.ts";
import { AppError } from "../../http/errors.ts";
import { type SseFrame, sseResponse } from "../../http/sse.ts";
import { ModelFailedError } from "../model-calls.ts";
import { type Answer, drain } from "../services/answer.ts";
import type { SearchIndexService } from "../services/indexes.ts";
import type { SearchQueryService } from "../services/queries.ts";

const tags = ["search"];
const errors = { 422: HTTPValidationError, 503: DetailError };
const streamDoc = {
  200: {
    description:
      "Server-Sent Events: `event: context` (data: the context tables), `event: delta` (data: `{text}`) per piece of the answer as it is generated, then `event: done` (data: `{response}`); `event: error` (data: `{detail}`) if the model fails midway.",
    content: { "text/event-stream": { schema: { type: "string" as const } } },
  },
};

/** What the routes call. */
export interface SearchServices {
  queries: SearchQueryService;
  indexes: SearchIndexService;
}

/** What the routes need of the app: the identity plugin, the shutdown signal, the logger. */
export type SearchRoutesContext = Pick<AppContext, "identity" | "shutdown" | "log">;

export function searchRoutes(ctx: SearchRoutesContext, { queries, indexes }: SearchServices) {
  const signalOf = (request: Request) => requestOrShutdown(request, ctx.shutdown);
  const respond = async (answer: Answer, signal: AbortSignal) => ({
    response: await drain(answer, signal).catch(modelFailure),
    context_data: answer.context_data,
  });
  const stream = (answer: Promise<Answer>, signal: AbortSignal) =>
    sseResponse(
      async function* (): AsyncGenerator<SseFrame> {
        const ready = await answer;
        yield { event: "context", data: ready.context_data };
        let response = "";
        for await (const text of ready.pieces(signal)) {
          response += text;
          yield { event: "delta", data: { text } };
        }
        yield { event: "done", data: { response } };
      },
      {
        signal,
        onError: (error) => {
          ctx.log.warn("search stream failed", { error });
          return [{ event: "error", data: { detail: (error as Error).message } }];
        },
      },
    );

  return new Elysia({ name: "atrium/search/search" })
    .use(ctx.identity)
    .guard({ owner: true })
    .post(
      "/search/local",
      async ({ body, owner, request }) => {
        const signal = signalOf(request);
        return respond(await queries.local(owner, body, signal).catch(modelFailure), signal);
      },
      {
        body: SearchQuery,
        response: { 200: SearchResponse, ...errors },
        detail: {
          tags,
          summary:
            "Local search: entities matched to the query, their graph neighbourhood, reports and sources",
        },
      },
    )
    .post(
      "/search/global",
      async ({ body, owner, request }) => {
        const signal = signalOf(request);
        return respond(await queries.global(owner, body, signal).catch(modelFailure), signal);
      },
      {
        body: SearchQuery,
        response: { 200: SearchResponse, ...errors },
        detail: {
          tags,
          summary: "Global search: map over community reports, reduce the scored points to an answer",
        },
      },
    )
    .post(
      "/search/local/stream",
      ({ body, owner, request }) => {
        const signal = signalOf(request);
        return stream(queries.local(owner, body, signal), signal);
      },
      {
        body: SearchQuery,
        detail: {
          tags,
          summary: "Local search as a stream: context first, then the answer as it is generated",
          responses: streamDoc,
        },
      },
    )
    .post(
      "/search/global/stream",
      ({ body, owner, request }) => {
        const signal = signalOf(request);
        return stream(queries.global(owner, body, signal), signal);
      },
      {
        body: SearchQuery,
        detail: {
          tags,
          summary: "Global search as a stream: context first, then the answer as it is generated",
          responses: streamDoc,
        },
      },
    )
    .post(
      "/generate_questions",
      async ({ body, owner, request }) => ({
        questions: await queries.questions(owner, body, signalOf(request)).catch(modelFailure),
      }),
      {
        body: SearchQuery,
        response: { 200: QuestionsResponse, ...errors },
        detail: { tags, summary: "Five follow-up questions grounded in the graph around the query" },
      },
    )
    .get(
      "/monitor-debug",
      (): never => {
        throw new Error("monitor-debug: an error raised on purpose to test error monitoring");
      },
      {
        response: { 200: MonitorDebugOk, 500: DetailError },
        detail: {
          tags,
          summary:
            "Fails on purpose: answers a logged 500 `{detail}` with a request id (for error-monitoring checks)",
        },
      },
    )
    .post(
      "/search/index",
      async ({ body, owner, request }) => {
        try {
          return await indexes.build(
            owner,
            { ...body, documents: body.documents.map((d) => ({ title: d.name, text: d.text })) },
            signalOf(request),
          );
        } catch (error) {
          // The provider failing midway is a 503 with what it said; anything else stays a 500.
          if (error instanceof ModelFailedError) modelFailure(error);
          throw error;
        }
      },
      {
        body: IndexRequest,
        response: { 200: IndexSummary, 409: DetailError, ...errors },
        detail: {
          tags,
          summary:
            "Index uploaded text (Atrium extension): units, extraction, communities, reports, FTS5; unchanged documents are skipped",
        },
      },
    )
    .get("/search/indexes", async ({ owner }) => ({ indexes: await indexes.list(owner) }), {
      response: { 200: IndexList },
      detail: { tags, summary: "The caller's indexes with their counts and modularity (Atrium extension)" },
    })
    .get(
      "/search/indexes/:index/documents",
      async ({ owner, params }) => ({ documents: await indexes.documents(owner, params.index) }),
      {
        params: IndexParams,
        response: { 200: DocumentList, 404: DetailError, 422: HTTPValidationError },
        detail: { tags, summary: "The documents of one of the caller's indexes (Atrium extension)" },
      },
    )
    .delete(
      "/search/indexes/:index/documents/:name",
      ({ owner, params, request }) => indexes.remove(owner, params.index, params.name, signalOf(request)),
      {
        params: IndexDocumentParams,
        response: { 200: IndexSummary, 404: DetailError, 409: DetailError, 422: HTTPValidationError },
        detail: {
          tags,
          summary:
            "Remove a document without a rebuild: its units, what only it supported, new reports for the communities it touched (Atrium extension)",
        },
      },
    );
}

/** A provider failing mid-answer is the model's fault, not ours: 503 with what it said. */
function modelFailure(error: unknown): never {
  if (error instanceof AppError) throw error;
  throw new AppError("unavailable", (error as Error).message);
}
