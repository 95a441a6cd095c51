/**
 * SQL for chat sessions and their messages. Message timestamps are unique and increasing within a
 * session (a message in the same millisecond as the previous one is stamped a millisecond later), so a
 * timestamp is an exact cursor for history. Every statement is scoped by `owner_id`.
 */
import type { Store } from "../../storage/store.ts";

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
  constructor(private readonly store: Store) {}

  insertSession(owner: string, session: SessionRecord): void {
    this.store.run(
      `INSERT INTO agent_sessions (${SESSION_COLUMNS}, owner_id)
       VALUES ($id, $target_id, $target_type, $status, $config, $message_count, $created_at, $last_message_at, $ended_at, $owner)`,
      { ...session, config: JSON.stringify(session.config), owner },
    );
  }

  getSession(owner: string, id: string): SessionRecord | undefined {
    const row = this.store.get<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM agent_sessions WHERE id = $id AND owner_id = $owner`,
      { id, owner },
    );
    return row && sessionOf(row);
  }

  setStatus(owner: string, id: string, status: SessionRecord["status"], endedAt: string | null = null): void {
    this.store.run(
      "UPDATE agent_sessions SET status = $status, ended_at = coalesce($endedAt, ended_at) WHERE id = $id AND owner_id = $owner",
      { id, owner, status, endedAt },
    );
  }

  /** Applies the inactivity rule to the owner's active sessions and persists the result. */
  sweepInactive(owner: string, now: number): void {
    const cutoff = new Date(now - INACTIVITY_MS).toISOString();
    this.store.run(
      `UPDATE agent_sessions AS s SET status = 'inactive'
       WHERE s.owner_id = $owner AND s.status = 'active'
         AND (coalesce(s.last_message_at, s.created_at) < $cutoff OR NOT (${TARGET_ACTIVE}))`,
      { owner, cutoff },
    );
  }

  listSessions(
    owner: string,
    filter: { status?: string; targetId?: string; targetType?: string; limit: number; offset: number },
  ) {
    const where = `owner_id = $owner AND ($status IS NULL OR status = $status)
      AND ($targetId IS NULL OR target_id = $targetId) AND ($targetType IS NULL OR target_type = $targetType)`;
    const params = {
      owner,
      status: filter.status ?? null,
      targetId: filter.targetId ?? null,
      targetType: filter.targetType ?? null,
    };
    const rows = this.store.all<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM agent_sessions WHERE ${where}
       ORDER BY coalesce(last_message_at, created_at) DESC, id LIMIT $limit OFFSET $offset`,
      { ...params, limit: filter.limit, offset: filter.offset },
    );
    const total = this.store.get<{ n: number }>(
      `SELECT count(*) AS n FROM agent_sessions WHERE ${where}`,
      params,
    );
    return { items: rows.map(sessionOf), total: total?.n ?? 0 };
  }

  /** The next timestamp for a session: now, or a millisecond after its last message if that is later. */
  nextTimestamp(owner: string, sessionId: string, now: number): string {
    const last = this.store.get<{ ts: string | null }>(
      "SELECT max(timestamp) AS ts FROM agent_messages WHERE session_id = $sessionId AND owner_id = $owner",
      { sessionId, owner },
    );
    const lastMs = last?.ts ? Date.parse(last.ts) : 0;
    return new Date(Math.max(now, lastMs + 1)).toISOString();
  }

  /** Stores a message and counts it on its session (which becomes active again). */
  insertMessage(owner: string, message: MessageRecord): void {
    this.store.tx(() => {
      this.store.run(
        `INSERT INTO agent_messages (${MESSAGE_COLUMNS}, owner_id)
         VALUES ($id, $session_id, $role, $type, $content, $sender, $receiver, $metadata, $thread_id, $parent_id, $timestamp, $owner)`,
        { ...message, metadata: JSON.stringify(message.metadata), owner },
      );
      this.store.run(
        `UPDATE agent_sessions SET message_count = message_count + 1, last_message_at = $ts, status = 'active'
         WHERE id = $id AND owner_id = $owner`,
        { id: message.session_id, ts: message.timestamp, owner },
      );
    });
  }

  /**
   * A page of history, oldest first. With `after` (and no `before`) the page starts just after it and
   * has_more says newer messages exist; otherwise the page is the newest before `before` (or overall)
   * and has_more says older messages exist.
   */
  history(
    owner: string,
    sessionId: string,
    page: { limit: number; before?: string; after?: string; threadId?: string },
  ): { messages: MessageRecord[]; hasMore: boolean } {
    const params = {
      owner,
      sessionId,
      before: page.before ?? null,
      after: page.after ?? null,
      threadId: page.threadId ?? null,
      limit: page.limit + 1,
    };
    const where = `session_id = $sessionId AND owner_id = $owner
      AND ($before IS NULL OR timestamp < $before) AND ($after IS NULL OR timestamp > $after)
      AND ($threadId IS NULL OR thread_id = $threadId)`;
    const forward = page.after !== undefined && page.before === undefined;
    const rows = this.store.all<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM agent_messages WHERE ${where}
       ORDER BY timestamp ${forward ? "ASC" : "DESC"} LIMIT $limit`,
      params,
    );
    const hasMore = rows.length > page.limit;
    const pageRows = rows.slice(0, page.limit);
    if (!forward) pageRows.reverse();
    return { messages: pageRows.map(messageOf), hasMore };
  }

  /** The last messages of a session, oldest first: the conversation an agent sees. */
  recent(owner: string, sessionId: string, count: number): MessageRecord[] {
    return this.history(owner, sessionId, { limit: count }).messages;
  }
}
