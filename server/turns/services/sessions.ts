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

  create(owner: string, title: string) {
    const row = this.deps.sessions.create(owner, newId("ses"), title);
    this.deps.analytics.capture("session_created");
    return sessionView(row);
  }

  /** Newest first, one page, with the owner's total (of the archived state asked for, if any). */
  list(owner: string, { limit, offset }: Page, archived?: boolean) {
    const { sessions } = this.deps;
    return {
      items: sessions.list(owner, limit, offset, archived).map(sessionView),
      total: sessions.count(owner, archived),
      limit,
      offset,
    };
  }

  get(owner: string, id: string) {
    return sessionView(this.row(owner, id));
  }

  update(owner: string, id: string, patch: { title?: string; archived?: boolean }) {
    const row = this.deps.sessions.update(owner, id, patch);
    if (!row) throw notFound();
    this.deps.analytics.capture("session_updated", { archived: row.archived === 1 });
    return sessionView(row);
  }

  /** The session's committed turns in order (running ones are not history yet). */
  history(owner: string, id: string, { limit, offset }: Page) {
    this.row(owner, id);
    return { items: this.deps.runs.committed(owner, id, limit, offset).map(turnRecord), limit, offset };
  }

  private row(owner: string, id: string) {
    const row = this.deps.sessions.get(owner, id);
    if (!row) throw notFound();
    return row;
  }
}

const notFound = () => AppError.notFound("Session not found");
