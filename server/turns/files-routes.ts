/** The Files API on the workspace `files/` namespace, and the read-only volume tree. */
import { Elysia } from "elysia";
import { TurnsError } from "../../schemas/common.ts";
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
} from "../../schemas/turns.ts";
import type { AppContext } from "../context.ts";
import { AppError } from "../http/errors.ts";
import { treeOf } from "./files.ts";
import type { TurnServices } from "./services.ts";

const tags = ["turns"];
const TREE_LIMIT = 2000;
const errors = { 404: TurnsError, 409: TurnsError, 413: TurnsError, 422: TurnsError };

const owner = (identity: { id: string } | undefined) => {
  if (!identity) throw new AppError("unauthorized", "Authentication required");
  return identity.id;
};

export function filesRoutes(ctx: AppContext, services: TurnServices) {
  const files = (identity: { id: string } | undefined) => services.files(owner(identity));
  const page = services.settings.storage.file_page_bytes;
  return new Elysia({ name: "atrium/turns/files" })
    .use(ctx.identity)
    .get("/api/files", ({ identity, query }) => files(identity).list(query.path ?? ""), {
      query: FileListQuery,
      response: { 200: FileList, ...errors },
      detail: { summary: "List the workspace files/ namespace (bounded)", tags },
    })
    .get("/api/files/stat", ({ identity, query }) => files(identity).stat(query.path), {
      query: FileQuery,
      response: { 200: FileStat, ...errors },
      detail: { summary: "File metadata and SHA-256", tags },
    })
    .get(
      "/api/files/content",
      ({ identity, query }) => files(identity).readPage(query.path, query.offset ?? 0, page),
      {
        query: FilePageQuery,
        response: { 200: FilePage, ...errors },
        detail: { summary: "One bounded UTF-8 page of a file", tags },
      },
    )
    .put(
      "/api/files/content",
      ({ identity, body }) =>
        files(identity).put(body.path, body.content, { sha256: body.sha256, overwrite: body.overwrite }),
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
      ({ identity, body }) => files(identity).append(body.path, body.content, { sha256: body.sha256 }),
      {
        body: FileAppend,
        response: { 200: FileWritten, ...errors },
        detail: { summary: "Append UTF-8 text", tags },
      },
    )
    .patch(
      "/api/files/content",
      ({ identity, body }) => files(identity).patch(body.path, body.old, body.new, { sha256: body.sha256 }),
      {
        body: FilePatch,
        response: { 200: FileWritten, ...errors },
        detail: { summary: "Replace the one occurrence of `old` with `new`; returns the new checksum", tags },
      },
    )
    .delete(
      "/api/files/content",
      ({ identity, query }) => files(identity).delete(query.path, { sha256: query.sha256 }),
      {
        query: FileDeleteQuery,
        response: { 200: FileDeleted, ...errors },
        detail: { summary: "Delete one file or one empty directory", tags },
      },
    )
    .get(
      "/api/volume/tree",
      ({ identity }) => {
        const root = services.volumeRoot(owner(identity));
        return { root: "workspace", ...treeOf(root, TREE_LIMIT) };
      },
      {
        response: { 200: VolumeTree },
        detail: { summary: "Relative paths of the mounted workspace volume (bounded, read-only)", tags },
      },
    );
}
