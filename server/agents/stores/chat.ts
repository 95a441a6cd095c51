/**
 * SQL for chat sessions and their messages. Message timestamps are unique and increasing within a
 * session (a message in the same millisecond as the previous one is stamped a millisecond later), so a
 * timestamp is an exact cursor for history. Every statement is scoped by `owner_id`. Over the database
 * port (either engine).
 */
import { isUniqueViolation } from "../../storage/db/dialect.ts";
import type { Db, Queryable } from "../../storage/db/port.ts";

export interface SessionRecord {
  id: string;
  target_id: string;
  target_type: "agent" | "fleet";
  status: "active" | "inactive" | "ended";
  config: Record<string, unknown>;
  message_count: number;
  created_at: string;
  last_message_at: string | null;
  ended_at: string | null;
}

export interface MessageRecord {
  id: string;
  session_id: string;
  role: "user" | "assistant";
  type: string;
  content: string;
  sender: string;
  receiver: string;
  metadata: Record<string, unknown>;
  thread_id: string | null;
  parent_id: string | null;
  timestamp: string;
}

type SessionRow = Omit<SessionRecord, "config"> & { config: string };
type MessageRow = Omit<MessageRecord, "metadata"> & { metadata: string };

const SESSION_COLUMNS =
  "id, target_id, target_type, status, config, message_count, created_at, last_message_at, ended_at";
const MESSAGE_COLUMNS =
  "id, session_id, role, type, content, sender, receiver, metadata, thread_id, parent_id, timestamp";

/** No activity for this long makes a session inactive (spec: 30 minutes). */
export const INACTIVITY_MS = 30 * 60 * 1000;

const sessionOf = (row: SessionRow): SessionRecord => ({ ...row, config: JSON.parse(row.config) });
const messageOf = (row: MessageRow): MessageRecord => ({ ...row, metadata: JSON.parse(row.metadata) });

/** A session's target has an active agent: the agent itself, or an active member of an active fleet. */
const TARGET_ACTIVE = `CASE s.target_type
  WHEN 'agent' THEN EXISTS (SELECT 1 FROM agents a WHERE a.id = s.target_id AND a.owner_id = s.owner_id AND a.status = 'active')
  ELSE EXISTS (SELECT 1 FROM fleets f JOIN fleet_agents fa ON fa.fleet_id = f.id JOIN agents a ON a.id = fa.agent_id
               WHERE f.id = s.target_id AND f.owner_id = s.owner_id AND f.status = 'active' AND a.status = 'active')
  END`;

export class AgentChatStore {
  constructor(private readonly db: Db) {}

  async insertSession(owner: string, session: SessionRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO agent_sessions (${SESSION_COLUMNS}, owner_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        session.id,
        session.target_id,
        session.target_type,
        session.status,
        JSON.stringify(session.config),
        session.message_count,
        session.created_at,
        session.last_message_at,
        session.ended_at,
        owner,
      ],
    );
  }

  async getSession(owner: string, id: string): Promise<SessionRecord | undefined> {
    const row = await this.db.get<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM agent_sessions WHERE id = ? AND owner_id = ?`,
      [id, owner],
    );
    return row && sessionOf(row);
  }

  async setStatus(
    owner: string,
    id: string,
    status: SessionRecord["status"],
    endedAt: string | null = null,
  ): Promise<void> {
    await this.db.run(
      "UPDATE agent_sessions SET status = ?, ended_at = coalesce(CAST(? AS TEXT), ended_at) WHERE id = ? AND owner_id = ?",
      [status, endedAt, id, owner],
    );
  }

  /** Applies the inactivity rule to the owner's active sessions and persists the result. */
  async sweepInactive(owner: string, now: number): Promise<void> {
    const cutoff = new Date(now - INACTIVITY_MS).toISOString();
    await this.db.run(
      `UPDATE agent_sessions AS s SET status = 'inactive'
       WHERE s.owner_id = ? AND s.status = 'active'
         AND (coalesce(s.last_message_at, s.created_at) < ? OR NOT (${TARGET_ACTIVE}))`,
      [owner, cutoff],
    );
  }

  async listSessions(
    owner: string,
    filter: { status?: string; targetId?: string; targetType?: string; limit: number; offset: number },
  ) {
    const where = `owner_id = ? AND (CAST(? AS TEXT) IS NULL OR status = ?)
      AND (CAST(? AS TEXT) IS NULL OR target_id = ?) AND (CAST(? AS TEXT) IS NULL OR target_type = ?)`;
    const [status, targetId, targetType] = [
      filter.status ?? null,
      filter.targetId ?? null,
      filter.targetType ?? null,
    ];
    const params = [owner, status, status, targetId, targetId, targetType, targetType];
    const rows = await this.db.all<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM agent_sessions WHERE ${where}
       ORDER BY coalesce(last_message_at, created_at) DESC, id LIMIT ? OFFSET ?`,
      [...params, filter.limit, filter.offset],
    );
    const total = await this.db.get<{ n: number }>(
      `SELECT count(*) AS n FROM agent_sessions WHERE ${where}`,
      params,
    );
    return { items: rows.map(sessionOf), total: total?.n ?? 0 };
  }

  /**
   * Stores a message and counts it on its session (which becomes active again). Its timestamp is now,
   * or a millisecond after the session's last message if that is later, read in the same transaction;
   * two writers on PostgreSQL that read the same last message collide on the unique timestamp, and the
   * loser tries again with the next millisecond.
   */
  async appendMessage(
    owner: string,
    message: Omit<MessageRecord, "timestamp">,
    now: number,
  ): Promise<MessageRecord> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.db.tx((tx) => insertMessage(tx, owner, message, now));
      } catch (error) {
        if (attempt >= 4 || !isUniqueViolation(error)) throw error;
      }
    }
  }

  /**
   * A page of history, oldest first. With `after` (and no `before`) the page starts just after it and
   * has_more says newer messages exist; otherwise the page is the newest before `before` (or overall)
   * and has_more says older messages exist.
   */
  async history(
    owner: string,
    sessionId: string,
    page: { limit: number; before?: string; after?: string; threadId?: string },
  ): Promise<{ messages: MessageRecord[]; hasMore: boolean }> {
    const [before, after, threadId] = [page.before ?? null, page.after ?? null, page.threadId ?? null];
    const where = `session_id = ? AND owner_id = ?
      AND (CAST(? AS TEXT) IS NULL OR timestamp < ?) AND (CAST(? AS TEXT) IS NULL OR timestamp > ?)
      AND (CAST(? AS TEXT) IS NULL OR thread_id = ?)`;
    const forward = page.after !== undefined && page.before === undefined;
    const rows = await this.db.all<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM agent_messages WHERE ${where}
       ORDER BY timestamp ${forward ? "ASC" : "DESC"} LIMIT ?`,
      [sessionId, owner, before, before, after, after, threadId, threadId, page.limit + 1],
    );
    const hasMore = rows.length > page.limit;
    const pageRows = rows.slice(0, page.limit);
    if (!forward) pageRows.reverse();
    return { messages: pageRows.map(messageOf), hasMore };
  }

  /** The last messages of a session, oldest first: the conversation an agent sees. */
  async recent(owner: string, sessionId: string, count: number): Promise<MessageRecord[]> {
    return (await this.history(owner, sessionId, { limit: count })).messages;
  }
}

async function insertMessage(
  tx: Queryable,
  owner: string,
  message: Omit<MessageRecord, "timestamp">,
  now: number,
): Promise<MessageRecord> {
  const last = await tx.get<{ ts: string | null }>(
    "SELECT max(timestamp) AS ts FROM agent_messages WHERE session_id = ? AND owner_id = ?",
    [message.session_id, owner],
  );
  const lastMs = last?.ts ? Date.parse(last.ts) : 0;
  const record: MessageRecord = { ...message, timestamp: new Date(Math.max(now, lastMs + 1)).toISOString() };
  await tx.run(
    `INSERT INTO agent_messages (${MESSAGE_COLUMNS}, owner_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      record.id,
      record.session_id,
      record.role,
      record.type,
      record.content,
      record.sender,
      record.receiver,
      JSON.stringify(record.metadata),
      record.thread_id,
      record.parent_id,
      record.timestamp,
      owner,
    ],
  );
  await tx.run(
    `UPDATE agent_sessions SET message_count = message_count + 1, last_message_at = ?, status = 'active'
     WHERE id = ? AND owner_id = ?`,
    [record.timestamp, record.session_id, owner],
  );
  return record;
}
