/**
 * `POST /search/index/stream` (Atrium extension): the same build as `POST /search/index`, answered as
 * Server-Sent Events so a client can show progress while it runs — `event: progress`
 * `{phase, done, total}` as the pipeline works through each phase (units, extraction, communities,
 * reports; a phase's unsent count is replaced by its later one, so a fast phase does not flood the
 * socket, and each phase's last count is always sent), then `event: done`
 * with the summary, or `event: error` `{detail}` (a build of the same index already running, a model
 * failing). The web UI's search view builds indexes from dropped files through it.
 */
import { Elysia } from "elysia";
import { IndexRequest } from "../../../schemas/search.ts";
import { requestOrShutdown } from "../../http/abort.ts";
import { type SseFrame, sseResponse } from "../../http/sse.ts";
import type { SearchIndexService } from "../services/indexes.ts";
import type { SearchRoutesContext } from "./search.ts";

interface Progress {
  phase: string;
  done: number;
  total: number;
}

export function indexStreamRoutes(indexes: SearchIndexService, ctx: SearchRoutesContext) {
  return new Elysia({ name: "atrium/search-index-stream" })
    .use(ctx.identity)
    .guard({ owner: true })
    .post(
      "/search/index/stream",
      ({ body, owner, request }) =>
        sseResponse(
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
            const documents = body.documents.map((d) => ({ title: d.name, text: d.text }));
            const built = indexes.build(owner, { ...body, documents }, signal, report);
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
            yield { event: "done", data: await built };
          },
          {
            signal: requestOrShutdown(request, ctx.shutdown),
            onError: (error) => {
              ctx.log.warn("search index stream failed", { error });
              return [{ event: "error", data: { detail: (error as Error).message } }];
            },
          },
        ),
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
