/**
 * Attachments (uploaded for use in turns) and artifacts (produced by a turn's `create_artifact`, private
 * candidates until the turn commits): their rows in the database (the port: either engine), their bytes in files of the owner's folder
 * under the data dir. The sha256 stored with the row is checked again before an artifact's bytes are sent.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AppError } from "../../http/errors.ts";
import { isoNow } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import type { Db, Queryable } from "../../storage/db/port.ts";
import { ownerFolders } from "../../workspace/owner-folders.ts";
import { sha256 } from "./workspace-files.ts";

export interface AttachmentRow {
  id: string;
  owner_id: string;
  filename: string;
  media_type: string;
  byte_size: number;
  sha256: string;
  created_at: string;
}

export interface ArtifactRow {
  id: string;
  owner_id: string;
  run_id: string;
  kind: string;
  title: string;
  media_type: string;
  byte_size: number;
  sha256: string;
  state: "candidate" | "committed" | "discarded";
  created_at: string;
}

export class TurnAssetStore {
  constructor(
    private readonly db: Db,
    private readonly dataDir: string,
  ) {}

  private attachmentPath(owner: string, id: string) {
    return join(ownerFolders(this.dataDir, owner).attachments, id);
  }

  private artifactPath(owner: string, id: string) {
    return join(ownerFolders(this.dataDir, owner).artifacts, id);
  }

  async addAttachment(
    owner: string,
    filename: string,
    mediaType: string,
    bytes: Uint8Array,
  ): Promise<AttachmentRow> {
    const id = newId("att");
    const path = this.attachmentPath(owner, id);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, bytes);
    const row = await this.db.get<AttachmentRow>(
      `INSERT INTO turn_attachments (id, owner_id, filename, media_type, byte_size, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       RETURNING *`,
      [
        id,
        owner,
        filename.slice(0, 255) || "upload",
        mediaType || "application/octet-stream",
        bytes.length,
        sha256(bytes),
        isoNow(),
      ],
    );
    return row as AttachmentRow;
  }

  attachment(owner: string, id: string): Promise<AttachmentRow | undefined> {
    return this.db.get<AttachmentRow>("SELECT * FROM turn_attachments WHERE id = ? AND owner_id = ?", [
      id,
      owner,
    ]);
  }

  attachmentBytes(row: AttachmentRow): Uint8Array {
    return readFileSync(this.attachmentPath(row.owner_id, row.id));
  }

  /** A private candidate, visible only after its run commits. */
  async addArtifactCandidate(
    owner: string,
    runId: string,
    meta: { kind: string; title: string; mediaType: string },
    bytes: Uint8Array,
  ): Promise<ArtifactRow> {
    const id = newId("art");
    const path = this.artifactPath(owner, id);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, bytes);
    const row = await this.db.get<ArtifactRow>(
      `INSERT INTO turn_artifacts (id, owner_id, run_id, kind, title, media_type, byte_size, sha256, state, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'candidate', ?) RETURNING *`,
      [id, owner, runId, meta.kind, meta.title, meta.mediaType, bytes.length, sha256(bytes), isoNow()],
    );
    return row as ArtifactRow;
  }

  /**
   * At commit: a completed run publishes its candidates (in the commit's transaction, `q`); any other
   * outcome discards them, rows first, then their files.
   */
  async settleCandidates(runId: string, publish: boolean, q: Queryable = this.db): Promise<void> {
    if (publish) {
      await q.run("UPDATE turn_artifacts SET state = 'committed' WHERE run_id = ? AND state = 'candidate'", [
        runId,
      ]);
      return;
    }
    const rows = await q.all<{ id: string; owner_id: string }>(
      "UPDATE turn_artifacts SET state = 'discarded' WHERE run_id = ? AND state = 'candidate' RETURNING id, owner_id",
      [runId],
    );
    for (const row of rows) rmSync(this.artifactPath(row.owner_id, row.id), { force: true });
  }

  /** Candidates of runs that never committed (a crash) are discarded at startup. */
  async discardOrphans(): Promise<void> {
    const rows = await this.db.all<{ run_id: string }>(
      `SELECT DISTINCT a.run_id FROM turn_artifacts a JOIN turn_runs r ON r.id = a.run_id
       WHERE a.state = 'candidate' AND r.status != 'completed'`,
    );
    for (const row of rows) await this.settleCandidates(row.run_id, false);
  }

  artifact(owner: string, id: string): Promise<ArtifactRow | undefined> {
    return this.db.get<ArtifactRow>(
      "SELECT * FROM turn_artifacts WHERE id = ? AND owner_id = ? AND state = 'committed'",
      [id, owner],
    );
  }

  /** The artifact's bytes, only when they still match the stored sha256. */
  artifactBytes(row: ArtifactRow): Uint8Array {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(this.artifactPath(row.owner_id, row.id));
    } catch {
      throw new AppError("conflict", "The artifact's content is missing", {
        code: "artifact_content_missing",
      });
    }
    if (sha256(bytes) !== row.sha256) {
      throw new AppError("conflict", "The artifact's content does not match its checksum", {
        code: "artifact_checksum_mismatch",
      });
    }
    return bytes;
  }

  /** Bytes the owner's attachments and artifacts not discarded take (the quota counts them). */
  async bytesUsed(owner: string): Promise<number> {
    const row = await this.db.get<{ n: number | null }>(
      `SELECT (SELECT coalesce(sum(byte_size), 0) FROM turn_attachments WHERE owner_id = ?)
            + (SELECT coalesce(sum(byte_size), 0) FROM turn_artifacts WHERE owner_id = ? AND state != 'discarded') AS n`,
      [owner, owner],
    );
    return row?.n ?? 0;
  }
}
