/**
 * The mirror's sessions table (`chat_sessions`): one row per pi session file, with its title and
 * activity times. Every statement is scoped by owner; a row of another owner is simply not found.
 */
import { isoNow } from "../../lib/clock.ts";
import type { Store } from "../../storage/store.ts";

export interface ChatSessionRow {
  id: string;
  session_file: string;
  title: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS = "id, session_file, title, created_at, updated_at";

export class ChatSessionStore {
  constructor(private readonly db: Store) {}

  upsert(owner: string, id: string, sessionFile: string): void {
    this.db.run(
      `INSERT INTO chat_sessions (owner_id, id, session_file) VALUES ($owner, $id, $file)
       ON CONFLICT (owner_id, id) DO UPDATE SET session_file = excluded.session_file`,
      { owner, id, file: sessionFile },
    );
  }

  get(owner: string, id: string): ChatSessionRow | undefined {
    return this.db.get<ChatSessionRow>(`SELECT ${COLUMNS} FROM chat_sessions WHERE owner_id = ? AND id = ?`, [
      owner,
      id,
    ]);
  }

  byFile(owner: string, sessionFile: string): ChatSessionRow | undefined {
    return this.db.get<ChatSessionRow>(
      `SELECT ${COLUMNS} FROM chat_sessions WHERE owner_id = ? AND session_file = ?`,
      [owner, sessionFile],
    );
  }

  /** The row a client's reference names: by id when it gives one, else by (confined) file. */
  find(owner: string, ref: { sessionId?: string; sessionFile?: string }): ChatSessionRow | undefined {
    if (ref.sessionId) return this.get(owner, ref.sessionId);
    return ref.sessionFile ? this.byFile(owner, ref.sessionFile) : undefined;
  }

  /** Newest activity first. */
  list(owner: string, limit: number, offset: number): ChatSessionRow[] {
    return this.db.all<ChatSessionRow>(
      `SELECT ${COLUMNS} FROM chat_sessions
       WHERE owner_id = ? ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?`,
      [owner, limit, offset],
    );
  }

  /** Records activity; the first prompt becomes the title. */
  touch(owner: string, id: string, firstPrompt?: string): void {
    this.db.run(
      `UPDATE chat_sessions SET updated_at = $now, title = COALESCE(title, $title)
       WHERE owner_id = $owner AND id = $id`,
      { now: isoNow(), title: firstPrompt ? titleOf(firstPrompt) : null, owner, id },
    );
  }

  /** Deletes a session with its runs, tool calls and file mutations (foreign-key cascades). */
  delete(owner: string, id: string): boolean {
    return this.db.run("DELETE FROM chat_sessions WHERE owner_id = ? AND id = ?", [owner, id]).changes > 0;
  }

  /** Deletes every session of an owner (cascading as `delete` does); returns the rows it deleted. */
  eraseOwner(owner: string): ChatSessionRow[] {
    const rows = this.db.all<ChatSessionRow>(`SELECT ${COLUMNS} FROM chat_sessions WHERE owner_id = ?`, [
      owner,
    ]);
    this.db.run("DELETE FROM chat_sessions WHERE owner_id = ?", [owner]);
    return rows;
  }
}

function titleOf(prompt: string): string {
  const line = prompt.trim().replace(/\s+/g, " ");
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
