/**
 * Attachments and committed artifacts as the API sees them: uploads bounded by `storage.max_upload_bytes`
 * and the owner's quota, metadata views, and artifact bytes verified against their checksum. Another
 * owner's row is "not found", the same as one that never existed.
 */
import type { PolicySettings } from "../../config/policy-schema.ts";
import { AppError } from "../../http/errors.ts";
import type { TurnAnalytics } from "../runtime/analytics.ts";
import type { TurnAssetStore } from "../stores/assets.ts";
import type { TurnQuota } from "./quota.ts";
import { artifactView, attachmentView } from "./views.ts";

export interface TurnAssetDeps {
  assets: TurnAssetStore;
  quota: Pick<TurnQuota, "check">;
  analytics: Pick<TurnAnalytics, "capture">;
  /** Read per upload: the policy's storage settings. */
  storage: PolicySettings["storage"];
}

export class TurnAssetService {
  constructor(private readonly deps: TurnAssetDeps) {}

  get maxUploadBytes(): number {
    return this.deps.storage.max_upload_bytes;
  }

  async upload(owner: string, file: Blob) {
    const max = this.maxUploadBytes;
    if (file.size > max) throw tooLarge(max);
    const bytes = new Uint8Array(await file.arrayBuffer());
    if (bytes.length > max) throw tooLarge(max);
    await this.deps.quota.check(owner, bytes.length);
    const name = (file as File).name || "upload";
    const mediaType = (file.type || "application/octet-stream").split(";")[0] as string;
    return attachmentView(await this.deps.assets.addAttachment(owner, name, mediaType, bytes));
  }

  async attachment(owner: string, id: string) {
    const row = await this.deps.assets.attachment(owner, id);
    if (!row) throw AppError.notFound("Attachment not found");
    return attachmentView(row);
  }

  async artifact(owner: string, id: string) {
    const row = await this.artifactRow(owner, id);
    this.deps.analytics.capture("artifact_downloaded", { part: "metadata" });
    return artifactView(row);
  }

  /** The artifact's bytes, only when they still match the stored checksum (else 409). */
  async artifactContent(owner: string, id: string) {
    const row = await this.artifactRow(owner, id);
    const bytes = this.deps.assets.artifactBytes(row);
    this.deps.analytics.capture("artifact_downloaded", { part: "content" });
    return { bytes, mediaType: row.media_type, sha256: row.sha256, title: row.title };
  }

  private async artifactRow(owner: string, id: string) {
    const row = await this.deps.assets.artifact(owner, id);
    if (!row) throw AppError.notFound("Artifact not found");
    return row;
  }
}

const tooLarge = (max: number) => new AppError("too_large", `Uploads are limited to ${max} bytes`);
