/**
 * `POST /search/index/stream` (Atrium extension): the same build as `POST /search/index`, answered as
 * Server-Sent Events so a client can show progress while it runs — `event: progress`
 * `{phase, done, total}` as the pipeline works through each phase (units, extraction, communities,
 * reports; a phase's unsent count is replaced by its later one, so a fast phase does not flood the
 * socket, and each phase's last count is always sent), then `event: done`
 * with the summary, or `event: error` `{detail}` (a build of the same index already running, a model
 * failing). The upload form (index-upload.ts) answers the same frames.
 */
import { Elysia } from "elysia";
import { IndexRequest } from "../../../schemas/search.ts";
import { requestOrShutdown } from "../../http/abort.ts";
import { type SseFrame, sseResponse } from "../../http/sse.ts";
import type { IndexBuildInput, SearchIndexService } from "../services/indexes.ts";
import type { SkippedFile } from "../services/uploads.ts";
import type { SearchRoutesContext } from "./search.ts";

interface Progress {
  phase: string;
  done: number;
  total: number;
}

/** What an upload adds to the summary: files not indexed (unsupported type, unreadable) and why. */
export interface UploadNotes {
  skipped: SkippedFile[];
  warnings: string[];
}

/**
 * The build as SSE: progress frames as the pipeline reports them, then `done` with the summary (the
 * upload's own skipped files and warnings first), or `error` `{detail}`.
 */
export function indexEvents(
  indexes: SearchIndexService,
  owner: string,
  input: IndexBuildInput,
  request: Request,
  ctx: SearchRoutesContext,
  notes: UploadNotes = { skipped: [], warnings: [] },
): Response {
  return sseResponse(
    async function* (signal): AsyncGenerator<SseFrame> {
      const queue: Progress[] = [];
      let wake: (() => void) | undefined;
      let finished = false;
      const report = (phase: string, done: number, total: number) => {
        // A later count of the same phase replaces the unsent one; a new phase is kept.
        if (queue.at(-1)?.phase === phase) queue.pop();
        queue.push({ phase, done, total });
        wake?.();
      };
      const built = indexes.build(owner, input, signal, report);
      const settle = () => {
        finished = true;
        wake?.();
      };
      built.then(settle, settle);
      for (;;) {
        const data = queue.shift();
        if (data) {
          yield { event: "progress", data };
          continue;
        }
        if (finished) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
      const summary = await built;
      yield {
        event: "done",
        data: {
          ...summary,
          skipped: [...notes.skipped, ...summary.skipped],
          warnings: [...notes.warnings, ...summary.warnings],
        },
      };
    },
    {
      signal: requestOrShutdown(request, ctx.shutdown),
      onError: (error) => {
        ctx.log.warn("search index stream failed", { error });
        return [{ event: "error", data: { detail: (error as Error).message } }];
      },
    },
  );
}

export function indexStreamRoutes(ctx: SearchRoutesContext, { indexes }: { indexes: SearchIndexService }) {
  return new Elysia({ name: "atrium/search/index-stream" })
    .use(ctx.identity)
    .guard({ owner: true })
    .post(
      "/search/index/stream",
      ({ body, owner, request }) => {
        const documents = body.documents.map((d) => ({ title: d.name, text: d.text }));
        return indexEvents(indexes, owner, { ...body, documents }, request, ctx);
      },
      {
        body: IndexRequest,
        detail: {
          tags: ["search"],
          summary:
            "Index uploaded text with progress (Atrium extension): SSE `progress` {phase, done, total}, then `done` with the summary",
          responses: {
            200: {
              description:
                "Server-Sent Events: `event: progress` (data: `{phase, done, total}`, phase one of units, extraction, communities, reports) while the build runs, then `event: done` (data: the IndexSummary of `POST /search/index`); `event: error` (data: `{detail}`) if it fails, e.g. the same index is already being built.",
              content: { "text/event-stream": { schema: { type: "string" as const } } },
            },
          },
        },
      },
    );
}
