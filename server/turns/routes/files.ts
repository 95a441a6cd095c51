/** The Files API on the workspace `files/` namespace, and the read-only volume tree: thin routes over TurnFileService. */
import { Elysia } from "elysia";
import { TurnsError } from "../../../schemas/common.ts";
import {
  FileAppend,
  FileDeleted,
  FileDeleteQuery,
  FileList,
  FileListQuery,
  FilePage,
  FilePageQuery,
  FilePatch,
  FilePut,
  FileQuery,
  FileStat,
  FileWritten,
  VolumeTree,
} from "../../../schemas/turns.ts";
import type { AppContext } from "../../context.ts";
import type { TurnFileService } from "../services/files.ts";

const tags = ["turns"];
const errors = { 404: TurnsError, 409: TurnsError, 413: TurnsError, 422: TurnsError };

export function filesRoutes(ctx: AppContext, { files }: { files: TurnFileService }) {
  return new Elysia({ name: "atrium/turns/files" })
    .use(ctx.identity)
    .guard({ owner: true })
    .get("/api/files", ({ owner, query }) => files.list(owner, query.path ?? ""), {
      query: FileListQuery,
      response: { 200: FileList, ...errors },
      detail: { summary: "List the workspace files/ namespace (bounded)", tags },
    })
    .get("/api/files/stat", ({ owner, query }) => files.stat(owner, query.path), {
      query: FileQuery,
      response: { 200: FileStat, ...errors },
      detail: { summary: "File metadata and SHA-256", tags },
    })
    .get("/api/files/content", ({ owner, query }) => files.readPage(owner, query.path, query.offset ?? 0), {
      query: FilePageQuery,
      response: { 200: FilePage, ...errors },
      detail: { summary: "One bounded UTF-8 page of a file", tags },
    })
    .put(
      "/api/files/content",
      ({ owner, body }) =>
        files.put(owner, body.path, body.content, { sha256: body.sha256, overwrite: body.overwrite }),
      {
        body: FilePut,
        response: { 200: FileWritten, ...errors },
        detail: {
          summary: "Create, or explicitly overwrite (overwrite: true or the current sha256), a UTF-8 file",
          tags,
        },
      },
    )
    .post(
      "/api/files/append",
      ({ owner, body }) => files.append(owner, body.path, body.content, { sha256: body.sha256 }),
      {
        body: FileAppend,
        response: { 200: FileWritten, ...errors },
        detail: { summary: "Append UTF-8 text", tags },
      },
    )
    .patch(
      "/api/files/content",
      ({ owner, body }) => files.patch(owner, body.path, body.old, body.new, { sha256: body.sha256 }),
      {
        body: FilePatch,
        response: { 200: FileWritten, ...errors },
        detail: { summary: "Replace the one occurrence of `old` with `new`; returns the new checksum", tags },
      },
    )
    .delete(
      "/api/files/content",
      ({ owner, query }) => files.delete(owner, query.path, { sha256: query.sha256 }),
      {
        query: FileDeleteQuery,
        response: { 200: FileDeleted, ...errors },
        detail: { summary: "Delete one file or one empty directory", tags },
      },
    )
    .get("/api/volume/tree", ({ owner }) => files.volumeTree(owner), {
      response: { 200: VolumeTree },
      detail: { summary: "Relative paths of the mounted workspace volume (bounded, read-only)", tags },
    });
}
