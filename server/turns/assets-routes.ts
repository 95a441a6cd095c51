/** Attachments (multipart upload, owner-only metadata) and committed artifacts (metadata, verified bytes). */
import { Elysia } from "elysia";
import { TurnsError } from "../../schemas/common.ts";
import {
  Artifact,
  ArtifactParams,
  Attachment,
  AttachmentParams,
  AttachmentUpload,
} from "../../schemas/turns.ts";
import type { AppContext } from "../context.ts";
import { AppError } from "../http/errors.ts";
import { artifactView, attachmentView } from "./assets.ts";
import type { TurnServices } from "./services.ts";

const tags = ["turns"];

export function assetRoutes(ctx: AppContext, services: TurnServices) {
  const { assets, analytics } = services;
  const maxUpload = services.settings.storage.max_upload_bytes;
  return new Elysia({ name: "atrium/turns/assets" })
    .use(ctx.identity)
    .guard({ owner: true })
    .post(
      "/api/attachments",
      async ({ owner: me, body }) => {
        const file = body.file;
        if (file.size > maxUpload)
          throw new AppError("too_large", `Uploads are limited to ${maxUpload} bytes`);
        const bytes = new Uint8Array(await file.arrayBuffer());
        if (bytes.length > maxUpload)
          throw new AppError("too_large", `Uploads are limited to ${maxUpload} bytes`);
        services.quota.check(me, bytes.length);
        const name = (file as File).name || "upload";
        const row = assets.addAttachment(
          me,
          name,
          (file.type || "application/octet-stream").split(";")[0] as string,
          bytes,
        );
        return attachmentView(row);
      },
      {
        body: AttachmentUpload,
        type: "multipart/form-data",
        response: { 200: Attachment, 413: TurnsError, 422: TurnsError },
        detail: { summary: "Upload one durable Attachment (multipart field `file`)", tags },
      },
    )
    .get(
      "/api/attachments/:attachment_id",
      ({ owner, params }) => {
        const row = assets.attachment(owner, params.attachment_id);
        if (!row) throw AppError.notFound("Attachment not found");
        return attachmentView(row);
      },
      {
        params: AttachmentParams,
        response: { 200: Attachment, 404: TurnsError },
        detail: { summary: "Owned Attachment metadata", tags },
      },
    )
    .get(
      "/api/artifacts/:artifact_id",
      ({ owner, params }) => {
        const row = assets.artifact(owner, params.artifact_id);
        if (!row) throw AppError.notFound("Artifact not found");
        analytics.capture("artifact_downloaded", { part: "metadata" });
        return artifactView(row);
      },
      {
        params: ArtifactParams,
        response: { 200: Artifact, 404: TurnsError },
        detail: { summary: "Committed Artifact metadata", tags },
      },
    )
    .get(
      "/api/artifacts/:artifact_id/content",
      ({ owner, params }) => {
        const row = assets.artifact(owner, params.artifact_id);
        if (!row) throw AppError.notFound("Artifact not found");
        const bytes = assets.artifactBytes(row);
        analytics.capture("artifact_downloaded", { part: "content" });
        return new Response(bytes as Uint8Array<ArrayBuffer>, {
          headers: {
            "content-type": row.media_type,
            "content-length": String(bytes.length),
            "x-content-sha256": row.sha256,
            // Model-made bytes: never rendered or sniffed as a page of this origin.
            "x-content-type-options": "nosniff",
            "content-security-policy": "sandbox; default-src 'none'",
            "content-disposition": `attachment; filename="${row.title.replace(/[^\w.-]+/g, "_")}"`,
          },
        });
      },
      {
        params: ArtifactParams,
        detail: {
          summary: "Verified committed Artifact bytes (checked against the stored SHA-256 before sending)",
          tags,
          responses: {
            200: {
              description:
                "the artifact's bytes, with their media type; x-content-sha256 carries the checksum",
              content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
            },
            404: { description: "unknown, not committed, or another owner's" },
            409: { description: "the stored bytes no longer match their checksum" },
          },
        },
      },
    );
}
