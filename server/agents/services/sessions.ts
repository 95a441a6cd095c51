/**
 * The HTTP reads of chat: the session list (with the inactivity rule applied first, so `status` is
 * current) and a session's history page by page, in the API's shape.
 */
import { AppError } from "../../http/errors.ts";
import type { Page } from "../../http/paging.ts";
import type { Clock } from "../../lib/clock.ts";
import type { AgentChatStore } from "../stores/chat.ts";
import { pageInfo } from "./paging.ts";

export interface AgentSessionDeps {
  chat: Pick<AgentChatStore, "sweepInactive" | "listSessions" | "getSession" | "history">;
  now?: Clock;
}

export interface HistoryPage {
  limit: number;
  /** Normalised ISO 8601 cursors: only messages strictly older / newer. */
  before?: string;
  after?: string;
  thread_id?: string;
}

export class AgentSessionService {
  private readonly now: Clock;

  constructor(private readonly deps: AgentSessionDeps) {
    this.now = deps.now ?? Date.now;
  }

  async list(owner: string, filter: Page & { status?: string; target_id?: string; target_type?: string }) {
    await this.deps.chat.sweepInactive(owner, this.now());
    const { items, total } = await this.deps.chat.listSessions(owner, {
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
      ...pageInfo(filter, items.length, total),
    };
  }

  async history(owner: string, sessionId: string, page: HistoryPage) {
    if (!(await this.deps.chat.getSession(owner, sessionId)))
      throw AppError.notFound(`Session ${sessionId} not found`);
    const { messages, hasMore } = await this.deps.chat.history(owner, sessionId, {
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
