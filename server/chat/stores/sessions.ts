/**
 * The mirror's sessions table (`chat_sessions`): one row per pi session file, with its title and
 * activity times. Every statement is scoped by owner; a row of another owner is simply not found.
 */
import { isoNow } from "../../lib/clock.ts";
import type { Db, Queryable } from "../../storage/db/port.ts";

export interface ChatSessionRow {
  id: string;
  session_file: string;
  title: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS = "id, session_file, title, created_at, updated_at";

export class ChatSessionStore {
  constructor(private readonly db: Db) {}

  async upsert(owner: string, id: string, sessionFile: string): Promise<void> {
    await this.db.run(
      `INSERT INTO chat_sessions (owner_id, id, session_file) VALUES (?, ?, ?)
       ON CONFLICT (owner_id, id) DO UPDATE SET session_file = excluded.session_file`,
      [owner, id, sessionFile],
    );
  }

  get(owner: string, id: string): Promise<ChatSessionRow | undefined> {
    return this.db.get<ChatSessionRow>(`SELECT ${COLUMNS} FROM chat_sessions WHERE owner_id = ? AND id = ?`, [
      owner,
      id,
    ]);
  }

  byFile(owner: string, sessionFile: string): Promise<ChatSessionRow | undefined> {
    return this.db.get<ChatSessionRow>(
      `SELECT ${COLUMNS} FROM chat_sessions WHERE owner_id = ? AND session_file = ?`,
      [owner, sessionFile],
    );
  }

  /** The row a client's reference names: by id when it gives one, else by (confined) file. */
  async find(
    owner: string,
    ref: { sessionId?: string; sessionFile?: string },
  ): Promise<ChatSessionRow | undefined> {
    if (ref.sessionId) return this.get(owner, ref.sessionId);
    return ref.sessionFile ? this.byFile(owner, ref.sessionFile) : undefined;
  }

  /** Newest activity first. */
  list(owner: string, limit: number, offset: number): Promise<ChatSessionRow[]> {
    return this.db.all<ChatSessionRow>(
      `SELECT ${COLUMNS} FROM chat_sessions
       WHERE owner_id = ? ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?`,
      [owner, limit, offset],
    );
  }

  /** Records activity; the first prompt becomes the title. */
  async touch(owner: string, id: string, firstPrompt?: string): Promise<void> {
    await this.db.run(
      `UPDATE chat_sessions SET updated_at = ?, title = COALESCE(title, ?)
       WHERE owner_id = ? AND id = ?`,
      [isoNow(), firstPrompt ? titleOf(firstPrompt) : null, owner, id],
    );
  }

  /** Deletes a session with its runs, tool calls and file mutations (foreign-key cascades). */
  async delete(owner: string, id: string): Promise<boolean> {
    const { changes } = await this.db.run("DELETE FROM chat_sessions WHERE owner_id = ? AND id = ?", [
      owner,
      id,
    ]);
    return changes > 0;
  }

  /**
   * Deletes every session of an owner (cascading as `delete` does), inside the caller's transaction;
   * returns the rows it deleted.
   */
  async eraseOwner(owner: string, q: Queryable = this.db): Promise<ChatSessionRow[]> {
    const rows = await q.all<ChatSessionRow>(`SELECT ${COLUMNS} FROM chat_sessions WHERE owner_id = ?`, [
      owner,
    ]);
    await q.run("DELETE FROM chat_sessions WHERE owner_id = ?", [owner]);
    return rows;
  }
}

function titleOf(prompt: string): string {
  const line = prompt.trim().replace(/\s+/g, " ");
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
