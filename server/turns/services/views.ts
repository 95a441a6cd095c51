/**
 * What the API returns for stored rows (the camelCase shapes of schemas/turns.ts): sessions, committed
 * turn records, attachments and artifacts. Rows never leave the services as they are stored.
 */
import type { TurnUsage } from "../../../schemas/turn-stream.ts";
import type { Part } from "../runtime/parts.ts";
import type { ArtifactRow, AttachmentRow } from "../stores/assets.ts";
import type { RunRow } from "../stores/runs.ts";
import type { TurnSessionRow } from "../stores/sessions.ts";
import type { TurnInput } from "./prepared-turn.ts";

export const sessionView = (r: TurnSessionRow) => ({
  id: r.id,
  title: r.title,
  archived: r.archived === 1,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** One committed turn of GET /api/sessions/{id}/turns: the user's input and the assistant's parts. */
export function turnRecord(row: RunRow) {
  const input = JSON.parse(row.input_json) as TurnInput;
  return {
    runId: row.id,
    sessionId: row.session_id,
    status: row.status as "completed" | "failed" | "cancelled",
    input: { text: input.text, attachmentIds: input.attachment_ids, skillSelections: input.skill_selections },
    messages: [
      { role: "user" as const, parts: [{ type: "text" as const, text: input.text }] },
      { role: "assistant" as const, parts: JSON.parse(row.parts_json ?? "[]") as Part[] },
    ],
    usage: JSON.parse(row.usage_json ?? "null") as TurnUsage | null,
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? "" } : null,
    durationMs: row.duration_ms,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}

export const attachmentView = (r: AttachmentRow) => ({
  id: r.id,
  filename: r.filename,
  mediaType: r.media_type,
  byteSize: r.byte_size,
  sha256: r.sha256,
  createdAt: r.created_at,
});

export const artifactView = (r: ArtifactRow) => ({
  id: r.id,
  runId: r.run_id,
  kind: r.kind,
  title: r.title,
  mediaType: r.media_type,
  byteSize: r.byte_size,
  sha256: r.sha256,
  createdAt: r.created_at,
});
