/**
 * The mirror's record of runs (`chat_runs`) and what each run did: its tool calls with their output
 * (`chat_tool_calls`) and the files its tools changed (`chat_file_mutations`). Provenance reads them
 * back. Every statement is scoped by owner.
 */
import { isoNow } from "../../lib/clock.ts";
import type { Store } from "../../storage/store.ts";

export interface ChatRunRow {
  id: string;
  session_id: string;
  prompt: string;
  mode: string;
  plan_action: string | null;
  model: string;
  thinking_level: string | null;
  status: "running" | "completed" | "failed" | "aborted";
  error: string | null;
  settings_json: string;
  usage_json: string | null;
  started_at: string;
  first_event_at: string | null;
  ended_at: string | null;
  duration_ms: number | null;
}

export interface ToolCallRow {
  tool_call_id: string;
  tool_name: string;
  args_json: string;
  output_json: string | null;
  is_error: number | null;
  started_at: string;
  ended_at: string | null;
}

export interface FileMutationRow {
  tool_call_id: string;
  tool_name: string;
  path: string;
  created_at: string;
}

export interface NewRun {
  id: string;
  sessionId: string;
  prompt: string;
  mode: string;
  planAction?: string;
  model: string;
  thinkingLevel?: string;
  settings: unknown;
}

export interface RunOutcome {
  status: ChatRunRow["status"];
  error?: string;
  usage?: unknown;
}

export class ChatRunStore {
  constructor(private readonly db: Store) {}

  start(owner: string, run: NewRun): void {
    this.db.run(
      `INSERT INTO chat_runs (id, owner_id, session_id, prompt, mode, plan_action, model, thinking_level,
         status, settings_json, started_at)
       VALUES ($id, $owner, $session, $prompt, $mode, $planAction, $model, $thinking, 'running', $settings, $now)`,
      {
        id: run.id,
        owner,
        session: run.sessionId,
        prompt: run.prompt,
        mode: run.mode,
        planAction: run.planAction ?? null,
        model: run.model,
        thinking: run.thinkingLevel ?? null,
        settings: JSON.stringify(run.settings),
        now: isoNow(),
      },
    );
  }

  markFirstEvent(owner: string, runId: string): void {
    this.db.run(
      "UPDATE chat_runs SET first_event_at = ? WHERE owner_id = ? AND id = ? AND first_event_at IS NULL",
      [isoNow(), owner, runId],
    );
  }

  /** Ends a running run; a run already ended keeps its first outcome. */
  finish(owner: string, runId: string, outcome: RunOutcome): void {
    const ended = isoNow();
    this.db.run(
      `UPDATE chat_runs SET status = $status, error = $error, usage_json = $usage, ended_at = $ended,
         duration_ms = CAST((julianday($ended) - julianday(started_at)) * 86400000 AS INTEGER)
       WHERE owner_id = $owner AND id = $id AND status = 'running'`,
      {
        status: outcome.status,
        error: outcome.error ?? null,
        usage: outcome.usage === undefined ? null : JSON.stringify(outcome.usage),
        ended,
        owner,
        id: runId,
      },
    );
  }

  get(owner: string, runId: string): ChatRunRow | undefined {
    return this.db.get<ChatRunRow>("SELECT * FROM chat_runs WHERE owner_id = ? AND id = ?", [owner, runId]);
  }

  /** A session's runs, newest first. */
  list(owner: string, sessionId: string, limit: number, offset: number): ChatRunRow[] {
    return this.db.all<ChatRunRow>(
      `SELECT * FROM chat_runs WHERE owner_id = ? AND session_id = ?
       ORDER BY started_at DESC, rowid DESC LIMIT ? OFFSET ?`,
      [owner, sessionId, limit, offset],
    );
  }

  hasRuns(owner: string, sessionId: string): boolean {
    return this.list(owner, sessionId, 1, 0).length > 0;
  }

  // --- what a run's tools did -------------------------------------------------------------------------

  startToolCall(owner: string, runId: string, toolCallId: string, toolName: string, args: unknown): void {
    this.db.run(
      `INSERT OR IGNORE INTO chat_tool_calls (owner_id, run_id, tool_call_id, tool_name, args_json, started_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
      [owner, runId, toolCallId, toolName, JSON.stringify(args ?? null), isoNow()],
    );
  }

  finishToolCall(owner: string, runId: string, toolCallId: string, output: unknown, isError: boolean): void {
    this.db.run(
      `UPDATE chat_tool_calls SET output_json = ?, is_error = ?, ended_at = ?
       WHERE owner_id = ? AND run_id = ? AND tool_call_id = ?`,
      [JSON.stringify(output ?? null), isError ? 1 : 0, isoNow(), owner, runId, toolCallId],
    );
  }

  addFileMutation(owner: string, runId: string, toolCallId: string, toolName: string, path: string): void {
    this.db.run(
      "INSERT INTO chat_file_mutations (owner_id, run_id, tool_call_id, tool_name, path) VALUES (?, ?, ?, ?, ?)",
      [owner, runId, toolCallId, toolName, path],
    );
  }

  toolCalls(owner: string, runId: string): ToolCallRow[] {
    return this.db.all<ToolCallRow>(
      `SELECT tool_call_id, tool_name, args_json, output_json, is_error, started_at, ended_at
       FROM chat_tool_calls WHERE owner_id = ? AND run_id = ? ORDER BY started_at, rowid`,
      [owner, runId],
    );
  }

  fileMutations(owner: string, runId: string): FileMutationRow[] {
    return this.db.all<FileMutationRow>(
      `SELECT tool_call_id, tool_name, path, created_at FROM chat_file_mutations
       WHERE owner_id = ? AND run_id = ? ORDER BY id`,
      [owner, runId],
    );
  }
}
