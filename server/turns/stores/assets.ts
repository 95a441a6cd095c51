/**
 * Attachments (uploaded for use in turns) and artifacts (produced by a turn's `create_artifact`, private
 * candidates until the turn commits): their rows in SQLite, their bytes in files of the owner's folder
 * under the data dir. The sha256 stored with the row is checked again before an artifact's bytes are sent.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AppError } from "../../http/errors.ts";
import { isoNow } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import type { Store } from "../../storage/store.ts";
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
    private readonly store: Store,
    private readonly dataDir: string,
  ) {}

  private attachmentPath(owner: string, id: string) {
    return join(ownerFolders(this.dataDir, owner).attachments, id);
  }

  private artifactPath(owner: string, id: string) {
    return join(ownerFolders(this.dataDir, owner).artifacts, id);
  }

  addAttachment(owner: string, filename: string, mediaType: string, bytes: Uint8Array): AttachmentRow {
    const id = newId("att");
    const path = this.attachmentPath(owner, id);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, bytes);
    this.store.run(
      "INSERT INTO turn_attachments (id, owner_id, filename, media_type, byte_size, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
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
    return this.attachment(owner, id) as AttachmentRow;
  }

  attachment(owner: string, id: string): AttachmentRow | undefined {
    return this.store.get<AttachmentRow>("SELECT * FROM turn_attachments WHERE id = ? AND owner_id = ?", [
      id,
      owner,
    ]);
  }

  attachmentBytes(row: AttachmentRow): Uint8Array {
    return readFileSync(this.attachmentPath(row.owner_id, row.id));
  }

  /** A private candidate, visible only after its run commits. */
  addArtifactCandidate(
    owner: string,
    runId: string,
    meta: { kind: string; title: string; mediaType: string },
    bytes: Uint8Array,
  ): ArtifactRow {
    const id = newId("art");
    const path = this.artifactPath(owner, id);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, bytes);
    this.store.run(
      `INSERT INTO turn_artifacts (id, owner_id, run_id, kind, title, media_type, byte_size, sha256, state, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'candidate', ?)`,
      [id, owner, runId, meta.kind, meta.title, meta.mediaType, bytes.length, sha256(bytes), isoNow()],
    );
    return this.store.get<ArtifactRow>("SELECT * FROM turn_artifacts WHERE id = ?", [id]) as ArtifactRow;
  }

  /** At commit: a completed run publishes its candidates; any other outcome discards them. */
  settleCandidates(runId: string, publish: boolean): void {
    if (publish) {
      this.store.run(
        "UPDATE turn_artifacts SET state = 'committed' WHERE run_id = ? AND state = 'candidate'",
        [runId],
      );
      return;
    }
    const rows = this.store.all<ArtifactRow>(
      "SELECT * FROM turn_artifacts WHERE run_id = ? AND state = 'candidate'",
      [runId],
    );
    for (const row of rows) rmSync(this.artifactPath(row.owner_id, row.id), { force: true });
    this.store.run("UPDATE turn_artifacts SET state = 'discarded' WHERE run_id = ? AND state = 'candidate'", [
      runId,
    ]);
  }

  /** Candidates of runs that never committed (a crash) are discarded at startup. */
  discardOrphans(): void {
    const rows = this.store.all<{ run_id: string }>(
      `SELECT DISTINCT a.run_id FROM turn_artifacts a JOIN turn_runs r ON r.id = a.run_id
       WHERE a.state = 'candidate' AND r.status != 'completed'`,
    );
    for (const row of rows) this.settleCandidates(row.run_id, false);
  }

  artifact(owner: string, id: string): ArtifactRow | undefined {
    return this.store.get<ArtifactRow>(
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
  bytesUsed(owner: string): number {
    const sum = (sql: string) => this.store.get<{ n: number | null }>(sql, [owner])?.n ?? 0;
    return (
      sum("SELECT sum(byte_size) AS n FROM turn_attachments WHERE owner_id = ?") +
      sum("SELECT sum(byte_size) AS n FROM turn_artifacts WHERE owner_id = ? AND state != 'discarded'")
    );
  }
}
