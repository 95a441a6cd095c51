/**
 * `POST /search/index/upload` (Atrium extension): the upload form of `POST /search/index/stream`. Files
 * arrive as multipart (`files`, repeated) and are read on the server by the same readers the `index`
 * command uses (PDF text, HTML as the text a reader sees, text and Markdown; PDF and HTML in a bounded
 * subprocess per document); a file of another type, one that cannot be read, or one past the reading
 * limits is not indexed and is listed in the summary's `skipped` with the reason. The
 * answer is the same Server-Sent Events. A file over `storage.max_upload_bytes` is 413 naming it (the
 * whole request is bounded by the server's body limit, 413 too); no readable file at all is 422.
 *
 * Multipart is the one body type besides JSON a cross-site page can send without a preflight: the
 * surface guard refuses a foreign Origin on every POST, and the body guard takes multipart only on the
 * routes declared as uploads, like this one.
 */
import { basename } from "node:path";
import { Elysia } from "elysia";
import { IndexUpload } from "../../../schemas/search.ts";
import { AppError } from "../../http/errors.ts";
import type { SearchIndexService } from "../services/indexes.ts";
import { type OwnedReader, readUploads } from "../services/uploads.ts";
import { indexEvents } from "./index-stream.ts";
import type { SearchRoutesContext } from "./search.ts";

export interface UploadLimits {
  /** Bytes one file may have (the policy's `storage.max_upload_bytes`). */
  maxFileBytes: number;
}

export function indexUploadRoutes(
  ctx: SearchRoutesContext,
  {
    indexes,
    parser: reader,
    uploads: limits,
  }: { indexes: SearchIndexService; parser: OwnedReader; uploads: UploadLimits },
) {
  return new Elysia({ name: "atrium/search/index-upload" })
    .use(ctx.identity)
    .guard({ owner: true })
    .post(
      "/search/index/upload",
      async ({ body, owner, request }) => {
        const files = Array.isArray(body.files) ? body.files : [body.files];
        for (const file of files) {
          if (file.size > limits.maxFileBytes)
            throw new AppError(
              "too_large",
              `${nameOf(file)} is ${file.size} bytes; a file may have at most ${limits.maxFileBytes} bytes`,
            );
        }
        const uploads = await Promise.all(
          files.map(async (file) => ({
            name: nameOf(file),
            bytes: new Uint8Array(await file.arrayBuffer()),
          })),
        );
        const { documents, skipped } = await readUploads(uploads, reader.for(owner));
        if (documents.length === 0)
          throw new AppError(
            "invalid",
            `No file could be indexed: ${skipped.map((s) => `${s.path} (${s.reason})`).join("; ")}`,
            { status: 422 },
          );
        const warnings = skipped.map((s) => `${s.path}: skipped, ${s.reason}`);
        const input = { name: body.name, model: body.model, documents };
        return indexEvents(indexes, owner, input, request, ctx, { skipped, warnings });
      },
      {
        body: IndexUpload,
        type: "multipart/form-data",
        detail: {
          tags: ["search"],
          summary:
            "Index uploaded files with progress (Atrium extension): multipart `files` (PDF, HTML, Markdown, text) read on the server; the same SSE as /search/index/stream",
          responses: {
            200: {
              description:
                "Server-Sent Events, as `POST /search/index/stream` answers: `progress` frames, then `done` with the IndexSummary, whose `skipped` lists every uploaded file not indexed (unsupported type, a PDF without text, binary, a PDF or HTML past the reading limits of the policy's `[search]` table) with the reason; or `error` `{detail}`.",
              content: { "text/event-stream": { schema: { type: "string" as const } } },
            },
            413: {
              description: "a file larger than storage.max_upload_bytes, or a request over the body limit",
            },
            422: { description: "invalid fields, or no uploaded file could be indexed (the reasons listed)" },
          },
        },
      },
    );
}

/** The file's own name, without any folder a client put in it. */
function nameOf(file: File): string {
  return basename(file.name.replaceAll("\\", "/")).slice(0, 255) || "upload";
}
