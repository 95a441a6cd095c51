/**
 * Sessions and their committed history: ids minted here, analytics told, rows returned as views. A
 * session of another owner is "Session not found", the same as one that never existed.
 */
import { AppError } from "../../http/errors.ts";
import type { Page } from "../../http/paging.ts";
import { newId } from "../../lib/ids.ts";
import type { TurnAnalytics } from "../runtime/analytics.ts";
import type { TurnRunStore } from "../stores/runs.ts";
import type { TurnSessionStore } from "../stores/sessions.ts";
import { sessionView, turnRecord } from "./views.ts";

export interface TurnSessionDeps {
  sessions: TurnSessionStore;
  runs: Pick<TurnRunStore, "committed">;
  analytics: Pick<TurnAnalytics, "capture">;
}

export class TurnSessionService {
  constructor(private readonly deps: TurnSessionDeps) {}

  async create(owner: string, title: string) {
    const row = await this.deps.sessions.create(owner, newId("ses"), title);
    this.deps.analytics.capture("session_created");
    return sessionView(row);
  }

  /** Newest first, one page, with the owner's total (of the archived state asked for, if any). */
  async list(owner: string, { limit, offset }: Page, archived?: boolean) {
    const { sessions } = this.deps;
    const [rows, total] = await Promise.all([
      sessions.list(owner, limit, offset, archived),
      sessions.count(owner, archived),
    ]);
    return {
      items: rows.map(sessionView),
      total,
      limit,
      offset,
    };
  }

  async get(owner: string, id: string) {
    return sessionView(await this.row(owner, id));
  }

  async update(owner: string, id: string, patch: { title?: string; archived?: boolean }) {
    const row = await this.deps.sessions.update(owner, id, patch);
    if (!row) throw notFound();
    this.deps.analytics.capture("session_updated", { archived: row.archived === 1 });
    return sessionView(row);
  }

  /** The session's committed turns in order (running ones are not history yet). */
  async history(owner: string, id: string, { limit, offset }: Page) {
    await this.row(owner, id);
    const rows = await this.deps.runs.committed(owner, id, limit, offset);
    return { items: rows.map(turnRecord), limit, offset };
  }

  private async row(owner: string, id: string) {
    const row = await this.deps.sessions.get(owner, id);
    if (!row) throw notFound();
    return row;
  }
}

const notFound = () => AppError.notFound("Session not found");
