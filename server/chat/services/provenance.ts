/** Recorded runs of a session and one run's provenance: model, settings snapshot, tool calls, files, timings. */
import { AppError } from "../../http/errors.ts";
import type { Page } from "../../http/paging.ts";
import type { ChatRunRow, ChatRunStore } from "../stores/runs.ts";

const parse = (json: string | null): unknown => (json === null ? null : JSON.parse(json));

function runRecord(row: ChatRunRow) {
  return {
    runId: row.id,
    sessionId: row.session_id,
    prompt: row.prompt,
    mode: row.mode,
    planAction: row.plan_action,
    model: row.model,
    thinkingLevel: row.thinking_level,
    status: row.status,
    error: row.error,
    usage: parse(row.usage_json),
    startedAt: row.started_at,
    firstEventAt: row.first_event_at,
    endedAt: row.ended_at,
    durationMs: row.duration_ms,
  };
}

export class ChatProvenanceService {
  constructor(private readonly runs: Pick<ChatRunStore, "list" | "get" | "toolCalls" | "fileMutations">) {}

  async list(owner: string, sessionId: string, { limit, offset }: Page) {
    return { runs: (await this.runs.list(owner, sessionId, limit, offset)).map(runRecord) };
  }

  async provenance(owner: string, runId: string) {
    const row = await this.runs.get(owner, runId);
    if (!row) throw new AppError("not_found", `No run '${runId}'`);
    return {
      ...runRecord(row),
      settings: parse(row.settings_json),
      toolCalls: (await this.runs.toolCalls(owner, runId)).map((c) => ({
        toolCallId: c.tool_call_id,
        toolName: c.tool_name,
        args: parse(c.args_json),
        output: parse(c.output_json),
        isError: c.is_error === null ? null : c.is_error === 1,
        startedAt: c.started_at,
        endedAt: c.ended_at,
      })),
      filesTouched: (await this.runs.fileMutations(owner, runId)).map((m) => ({
        path: m.path,
        toolName: m.tool_name,
        toolCallId: m.tool_call_id,
        at: m.created_at,
      })),
    };
  }
}
