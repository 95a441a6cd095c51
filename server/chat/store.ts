/**
 * The chat mirror's SQL: sessions, runs, tool calls, file mutations and stored provider keys. Every
 * statement is scoped by owner; a row of another owner is simply not found.
 */
import { isoNow } from "../lib/clock.ts";
import type { Store } from "../storage/store.ts";

export interface SessionRow {
  id: string;
  session_file: string;
  title: string | null;
  created_at: string;
  updated_at: string;
}

export interface RunRow {
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

export class ChatStore {
  constructor(private readonly store: Store) {}

  // --- sessions -------------------------------------------------------------------------------------

  upsertSession(owner: string, id: string, sessionFile: string): void {
    this.store.run(
      `INSERT INTO chat_sessions (owner_id, id, session_file) VALUES ($owner, $id, $file)
       ON CONFLICT (owner_id, id) DO UPDATE SET session_file = excluded.session_file`,
      { owner, id, file: sessionFile },
    );
  }

  session(owner: string, id: string): SessionRow | undefined {
    return this.store.get<SessionRow>(
      "SELECT id, session_file, title, created_at, updated_at FROM chat_sessions WHERE owner_id = ? AND id = ?",
      [owner, id],
    );
  }

  sessionByFile(owner: string, sessionFile: string): SessionRow | undefined {
    return this.store.get<SessionRow>(
      "SELECT id, session_file, title, created_at, updated_at FROM chat_sessions WHERE owner_id = ? AND session_file = ?",
      [owner, sessionFile],
    );
  }

  sessions(owner: string, limit: number, offset: number): SessionRow[] {
    return this.store.all<SessionRow>(
      `SELECT id, session_file, title, created_at, updated_at FROM chat_sessions
       WHERE owner_id = ? ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?`,
      [owner, limit, offset],
    );
  }

  /** Records activity; the first prompt becomes the title. */
  touchSession(owner: string, id: string, firstPrompt?: string): void {
    this.store.run(
      `UPDATE chat_sessions SET updated_at = $now, title = COALESCE(title, $title)
       WHERE owner_id = $owner AND id = $id`,
      { now: isoNow(), title: firstPrompt ? titleOf(firstPrompt) : null, owner, id },
    );
  }

  /** Deletes a session with its runs, tool calls and file mutations (foreign-key cascades). */
  deleteSession(owner: string, id: string): boolean {
    return this.store.run("DELETE FROM chat_sessions WHERE owner_id = ? AND id = ?", [owner, id]).changes > 0;
  }

  /** Erases every mirrored session and stored provider key of an owner; returns the counts. */
  eraseOwner(owner: string): { sessions: SessionRow[]; providers: number } {
    return this.store.tx(() => {
      const sessions = this.store.all<SessionRow>(
        "SELECT id, session_file, title, created_at, updated_at FROM chat_sessions WHERE owner_id = ?",
        [owner],
      );
      this.store.run("DELETE FROM chat_sessions WHERE owner_id = ?", [owner]);
      const providers = this.store.run("DELETE FROM chat_provider_keys WHERE owner_id = ?", [owner]).changes;
      return { sessions, providers };
    });
  }

  // --- runs -----------------------------------------------------------------------------------------

  startRun(owner: string, run: NewRun): void {
    this.store.run(
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
    this.store.run(
      "UPDATE chat_runs SET first_event_at = ? WHERE owner_id = ? AND id = ? AND first_event_at IS NULL",
      [isoNow(), owner, runId],
    );
  }

  finishRun(
    owner: string,
    runId: string,
    outcome: { status: RunRow["status"]; error?: string; usage?: unknown },
  ): void {
    const ended = new Date();
    this.store.run(
      `UPDATE chat_runs SET status = $status, error = $error, usage_json = $usage, ended_at = $ended,
         duration_ms = CAST((julianday($ended) - julianday(started_at)) * 86400000 AS INTEGER)
       WHERE owner_id = $owner AND id = $id AND status = 'running'`,
      {
        status: outcome.status,
        error: outcome.error ?? null,
        usage: outcome.usage === undefined ? null : JSON.stringify(outcome.usage),
        ended: ended.toISOString(),
        owner,
        id: runId,
      },
    );
  }

  run(owner: string, runId: string): RunRow | undefined {
    return this.store.get<RunRow>("SELECT * FROM chat_runs WHERE owner_id = ? AND id = ?", [owner, runId]);
  }

  runs(owner: string, sessionId: string, limit: number, offset: number): RunRow[] {
    return this.store.all<RunRow>(
      `SELECT * FROM chat_runs WHERE owner_id = ? AND session_id = ?
       ORDER BY started_at DESC, rowid DESC LIMIT ? OFFSET ?`,
      [owner, sessionId, limit, offset],
    );
  }

  // --- tool calls and file mutations ----------------------------------------------------------------

  startToolCall(owner: string, runId: string, toolCallId: string, toolName: string, args: unknown): void {
    this.store.run(
      `INSERT OR IGNORE INTO chat_tool_calls (owner_id, run_id, tool_call_id, tool_name, args_json, started_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
      [owner, runId, toolCallId, toolName, JSON.stringify(args ?? null), isoNow()],
    );
  }

  finishToolCall(owner: string, runId: string, toolCallId: string, output: unknown, isError: boolean): void {
    this.store.run(
      `UPDATE chat_tool_calls SET output_json = ?, is_error = ?, ended_at = ?
       WHERE owner_id = ? AND run_id = ? AND tool_call_id = ?`,
      [JSON.stringify(output ?? null), isError ? 1 : 0, isoNow(), owner, runId, toolCallId],
    );
  }

  addFileMutation(owner: string, runId: string, toolCallId: string, toolName: string, path: string): void {
    this.store.run(
      "INSERT INTO chat_file_mutations (owner_id, run_id, tool_call_id, tool_name, path) VALUES (?, ?, ?, ?, ?)",
      [owner, runId, toolCallId, toolName, path],
    );
  }

  toolCalls(owner: string, runId: string): ToolCallRow[] {
    return this.store.all<ToolCallRow>(
      `SELECT tool_call_id, tool_name, args_json, output_json, is_error, started_at, ended_at
       FROM chat_tool_calls WHERE owner_id = ? AND run_id = ? ORDER BY started_at, rowid`,
      [owner, runId],
    );
  }

  fileMutations(owner: string, runId: string): FileMutationRow[] {
    return this.store.all<FileMutationRow>(
      `SELECT tool_call_id, tool_name, path, created_at FROM chat_file_mutations
       WHERE owner_id = ? AND run_id = ? ORDER BY id`,
      [owner, runId],
    );
  }

  // --- provider keys --------------------------------------------------------------------------------

  providerKeys(owner: string): Record<string, string> {
    const rows = this.store.all<{ provider: string; api_key: string }>(
      "SELECT provider, api_key FROM chat_provider_keys WHERE owner_id = ?",
      [owner],
    );
    return Object.fromEntries(rows.map((r) => [r.provider, r.api_key]));
  }

  setProviderKey(owner: string, provider: string, key: string): void {
    this.store.run(
      `INSERT INTO chat_provider_keys (owner_id, provider, api_key) VALUES (?, ?, ?)
       ON CONFLICT (owner_id, provider) DO UPDATE SET api_key = excluded.api_key, updated_at = excluded.updated_at`,
      [owner, provider, key],
    );
  }

  clearProviderKey(owner: string, provider: string): boolean {
    return (
      this.store.run("DELETE FROM chat_provider_keys WHERE owner_id = ? AND provider = ?", [owner, provider])
        .changes > 0
    );
  }
}

function titleOf(prompt: string): string {
  const line = prompt.trim().replace(/\s+/g, " ");
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
