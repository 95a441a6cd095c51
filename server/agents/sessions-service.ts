/**
 * The HTTP reads of chat: the session list (with the inactivity rule applied first, so `status` is
 * current) and a session's history page by page.
 */
import { AppError } from "../http/errors.ts";
import type { Clock } from "../lib/clock.ts";
import type { ChatStore } from "./chat-store.ts";

export class SessionService {
  constructor(
    private readonly chat: ChatStore,
    private readonly now: Clock = Date.now,
  ) {}

  list(
    owner: string,
    filter: { status?: string; target_id?: string; target_type?: string; limit: number; offset: number },
  ) {
    this.chat.sweepInactive(owner, this.now());
    const { items, total } = this.chat.listSessions(owner, {
      status: filter.status,
      targetId: filter.target_id,
      targetType: filter.target_type,
      limit: filter.limit,
      offset: filter.offset,
    });
    return {
      sessions: items.map((s) => ({
        session_id: s.id,
        target_id: s.target_id,
        target_type: s.target_type,
        status: s.status,
        created_at: s.created_at,
        last_message_at: s.last_message_at,
        message_count: s.message_count,
      })),
      total,
      has_more: filter.offset + items.length < total,
    };
  }

  history(
    owner: string,
    sessionId: string,
    page: { limit: number; before?: string; after?: string; thread_id?: string },
  ) {
    if (!this.chat.getSession(owner, sessionId)) throw AppError.notFound(`Session ${sessionId} not found`);
    const { messages, hasMore } = this.chat.history(owner, sessionId, {
      limit: page.limit,
      before: page.before,
      after: page.after,
      threadId: page.thread_id,
    });
    return {
      messages: messages.map((m) => ({
        message_id: m.id,
        type: m.role,
        content: m.content,
        timestamp: m.timestamp,
        sender: m.sender,
        receiver: m.receiver,
        thread_id: m.thread_id,
        parent_id: m.parent_id,
        metadata: m.metadata,
      })),
      has_more: hasMore,
    };
  }
}
