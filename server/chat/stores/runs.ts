/**
 * The mirror's record of runs (`chat_runs`) and what each run did: its tool calls with their output
 * (`chat_tool_calls`) and the files its tools changed (`chat_file_mutations`). Provenance reads them
 * back. Every statement is scoped by owner.
 */
import { isoNow } from "../../lib/clock.ts";
import type { Db } from "../../storage/db/port.ts";

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

/** Every column of `ChatRunRow` (not `*`: the PostgreSQL table also has its `rowid` column). */
const RUN_COLUMNS = `id, session_id, prompt, mode, plan_action, model, thinking_level, status, error, settings_json,
  usage_json, started_at, first_event_at, ended_at, duration_ms`;

export class ChatRunStore {
  constructor(private readonly db: Db) {}

  async start(owner: string, run: NewRun): Promise<void> {
    await this.db.run(
      `INSERT INTO chat_runs (id, owner_id, session_id, prompt, mode, plan_action, model, thinking_level,
         status, settings_json, started_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)`,
      [
        run.id,
        owner,
        run.sessionId,
        run.prompt,
        run.mode,
        run.planAction ?? null,
        run.model,
        run.thinkingLevel ?? null,
        JSON.stringify(run.settings),
        isoNow(),
      ],
    );
  }

  async markFirstEvent(owner: string, runId: string): Promise<void> {
    await this.db.run(
      "UPDATE chat_runs SET first_event_at = ? WHERE owner_id = ? AND id = ? AND first_event_at IS NULL",
      [isoNow(), owner, runId],
    );
  }

  /** Ends a running run; a run already ended keeps its first outcome. */
  async finish(owner: string, runId: string, outcome: RunOutcome): Promise<void> {
    const ended = isoNow();
    const { epochSeconds } = this.db.dialect;
    await this.db.run(
      `UPDATE chat_runs SET status = ?, error = ?, usage_json = ?, ended_at = ?,
         duration_ms = CAST(ROUND((${epochSeconds("?")} - ${epochSeconds("started_at")}) * 1000) AS INTEGER)
       WHERE owner_id = ? AND id = ? AND status = 'running'`,
      [
        outcome.status,
        outcome.error ?? null,
        outcome.usage === undefined ? null : JSON.stringify(outcome.usage),
        ended,
        ended,
        owner,
        runId,
      ],
    );
  }

  /** Fails the owner's runs still marked running: the instance running them stopped (home.ts). */
  async failRunning(owner: string, error: string): Promise<number> {
    const ended = isoNow();
    const { epochSeconds } = this.db.dialect;
    const { changes } = await this.db.run(
      `UPDATE chat_runs SET status = 'failed', error = ?, ended_at = ?,
         duration_ms = CAST(ROUND((${epochSeconds("?")} - ${epochSeconds("started_at")}) * 1000) AS INTEGER)
       WHERE owner_id = ? AND status = 'running'`,
      [error, ended, ended, owner],
    );
    return changes;
  }

  get(owner: string, runId: string): Promise<ChatRunRow | undefined> {
    return this.db.get<ChatRunRow>(`SELECT ${RUN_COLUMNS} FROM chat_runs WHERE owner_id = ? AND id = ?`, [
      owner,
      runId,
    ]);
  }

  /** A session's runs, newest first. */
  list(owner: string, sessionId: string, limit: number, offset: number): Promise<ChatRunRow[]> {
    return this.db.all<ChatRunRow>(
      `SELECT ${RUN_COLUMNS} FROM chat_runs WHERE owner_id = ? AND session_id = ?
       ORDER BY started_at DESC, rowid DESC LIMIT ? OFFSET ?`,
      [owner, sessionId, limit, offset],
    );
  }

  async hasRuns(owner: string, sessionId: string): Promise<boolean> {
    return (await this.list(owner, sessionId, 1, 0)).length > 0;
  }

  // --- what a run's tools did -------------------------------------------------------------------------

  async startToolCall(owner: string, runId: string, toolCallId: string, toolName: string, args: unknown) {
    await this.db.run(
      `INSERT INTO chat_tool_calls (owner_id, run_id, tool_call_id, tool_name, args_json, started_at)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      [owner, runId, toolCallId, toolName, JSON.stringify(args ?? null), isoNow()],
    );
  }

  async finishToolCall(owner: string, runId: string, toolCallId: string, output: unknown, isError: boolean) {
    await this.db.run(
      `UPDATE chat_tool_calls SET output_json = ?, is_error = ?, ended_at = ?
       WHERE owner_id = ? AND run_id = ? AND tool_call_id = ?`,
      [JSON.stringify(output ?? null), isError ? 1 : 0, isoNow(), owner, runId, toolCallId],
    );
  }

  async addFileMutation(owner: string, runId: string, toolCallId: string, toolName: string, path: string) {
    await this.db.run(
      "INSERT INTO chat_file_mutations (owner_id, run_id, tool_call_id, tool_name, path) VALUES (?, ?, ?, ?, ?)",
      [owner, runId, toolCallId, toolName, path],
    );
  }

  toolCalls(owner: string, runId: string): Promise<ToolCallRow[]> {
    return this.db.all<ToolCallRow>(
      `SELECT tool_call_id, tool_name, args_json, output_json, is_error, started_at, ended_at
       FROM chat_tool_calls WHERE owner_id = ? AND run_id = ? ORDER BY started_at, rowid`,
      [owner, runId],
    );
  }

  fileMutations(owner: string, runId: string): Promise<FileMutationRow[]> {
    return this.db.all<FileMutationRow>(
      `SELECT tool_call_id, tool_name, path, created_at FROM chat_file_mutations
       WHERE owner_id = ? AND run_id = ? ORDER BY id`,
      [owner, runId],
    );
  }
}
