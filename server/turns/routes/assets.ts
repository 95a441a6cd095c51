/** Attachments (multipart upload, owner-only metadata) and committed artifacts (metadata, verified bytes). */
import { Elysia } from "elysia";
import { TurnsError } from "../../../schemas/common.ts";
import {
  Artifact,
  ArtifactParams,
  Attachment,
  AttachmentParams,
  AttachmentUpload,
} from "../../../schemas/turns.ts";
import type { AppContext } from "../../context.ts";
import type { TurnAssetService } from "../services/assets.ts";

const tags = ["turns"];

export function assetRoutes(ctx: AppContext, { assets }: { assets: TurnAssetService }) {
  return new Elysia({ name: "atrium/turns/assets" })
    .use(ctx.identity)
    .guard({ owner: true })
    .post("/api/attachments", ({ owner, body }) => assets.upload(owner, body.file), {
      body: AttachmentUpload,
      type: "multipart/form-data",
      response: { 200: Attachment, 413: TurnsError, 422: TurnsError },
      detail: { summary: "Upload one durable Attachment (multipart field `file`)", tags },
    })
    .get(
      "/api/attachments/:attachment_id",
      ({ owner, params }) => assets.attachment(owner, params.attachment_id),
      {
        params: AttachmentParams,
        response: { 200: Attachment, 404: TurnsError },
        detail: { summary: "Owned Attachment metadata", tags },
      },
    )
    .get("/api/artifacts/:artifact_id", ({ owner, params }) => assets.artifact(owner, params.artifact_id), {
      params: ArtifactParams,
      response: { 200: Artifact, 404: TurnsError },
      detail: { summary: "Committed Artifact metadata", tags },
    })
    .get(
      "/api/artifacts/:artifact_id/content",
      async ({ owner, params }) => {
        const { bytes, mediaType, sha256, title } = await assets.artifactContent(owner, params.artifact_id);
        return new Response(bytes as Uint8Array<ArrayBuffer>, {
          headers: {
            "content-type": mediaType,
            "content-length": String(bytes.length),
            "x-content-sha256": sha256,
            // Model-made bytes: never rendered or sniffed as a page of this origin.
            "x-content-type-options": "nosniff",
            "content-security-policy": "sandbox; default-src 'none'",
            "content-disposition": `attachment; filename="${title.replace(/[^\w.-]+/g, "_")}"`,
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
