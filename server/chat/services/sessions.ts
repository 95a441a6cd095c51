/**
 * Session lifecycle: new, resume/hydrate, list, delete, abort, account erase, and answering a pending
 * question. Every lookup is by owner: another owner's session is "missing", never visible.
 */
import { rmSync } from "node:fs";
import type { SessionInfo } from "@mariozechner/pi-coding-agent";
import { AppError } from "../../http/errors.ts";
import type { Page } from "../../http/paging.ts";
import { loadPi } from "../../models/pi-sdk.ts";
import { confineSessionFile, ownerPaths, publicPath, publicSessionFile } from "../paths.ts";
import type { RuntimeHost } from "../runtime/host.ts";
import type { LiveSession } from "../runtime/live-session.ts";
import { type Answer, AnswerError } from "../runtime/questionnaire.ts";
import { sessionMessages } from "../runtime/ui-messages.ts";
import type { ChatStore, SessionRow } from "../store.ts";
import { type SessionQuery, sessionTarget } from "./input.ts";

export type { SessionQuery };

export type DeleteResult =
  | { ok: true; sessionId: string; sessionFile: string }
  | { ok: false; reason: "session-not-owned-or-missing" };

export type AnswerResult =
  | {
      status: 200;
      body: { ok: true; message: string; mode: "agent" | "plan" | "harness"; planAction?: "execute" };
    }
  | { status: 404; body: { ok: false; message: string } };

export class SessionService {
  constructor(
    private readonly host: RuntimeHost,
    private readonly store: ChatStore,
    private readonly dataDir: string,
    /** False in protected mode without APP_CHAT_DATABASE_URL: session delete answers 501. */
    readonly mirrorEnabled: boolean,
  ) {}

  private sessionsDir(owner: string): string {
    return ownerPaths(this.dataDir, owner).sessionsDir;
  }

  /** The spec's `{sessionFile, sessionId}`, and the same as a hydrated session (`session`, `messages`). */
  async create(owner: string) {
    const { live } = await this.host.open(owner, {});
    const ref = { sessionFile: publicSessionFile(live.sessionFile) ?? "", sessionId: live.sessionId };
    return { ...ref, session: { ...ref }, messages: [] };
  }

  /** Opens (or reopens) a session and returns it with its messages; a lost session comes back fresh. */
  async hydrate(owner: string, query: SessionQuery) {
    const target = sessionTarget(this.sessionsDir(owner), query);
    if (!target.sessionFile && !target.sessionId) {
      const latest = this.store.sessions(owner, 1, 0)[0];
      if (latest) target.sessionId = latest.id;
    }
    const { live, sessionReset } = await this.host.open(owner, target);
    return {
      session: describe(live, this.store.session(owner, live.sessionId)),
      messages: sessionMessages(live.session.sessionManager.getBranch()),
      sessionReset,
    };
  }

  /**
   * The owner's sessions, newest first: the mirror's rows with what the session files say (message count,
   * first message, name). Paths are relative to the owner's folders (`sessions/<file>`, `workspace`).
   */
  async list(owner: string, { limit, offset }: Page) {
    const rows = this.store.sessions(owner, limit, offset);
    const paths = ownerPaths(this.dataDir, owner);
    const { SessionManager } = await loadPi();
    const files = new Map<string, SessionInfo>();
    if (rows.some((row) => row.session_file))
      for (const info of await SessionManager.list(paths.workspaceDir, paths.sessionsDir))
        files.set(info.path, info);
    return {
      sessions: rows.map((row) => {
        const info = files.get(row.session_file);
        const sessionFile = publicSessionFile(row.session_file) ?? "";
        const title = row.title ?? "New chat";
        return {
          path: sessionFile ? `sessions/${sessionFile}` : "",
          id: row.id,
          cwd: publicPath(paths, paths.workspaceDir),
          ...(info?.name ? { name: info.name } : {}),
          created: isoTime(row.created_at),
          modified: isoTime(row.updated_at),
          messageCount: info?.messageCount ?? 0,
          firstMessage: info?.firstMessage.trim() || (row.title ?? ""),
          sessionId: row.id,
          sessionFile,
          title,
          createdAt: row.created_at,
          updatedAt: row.updated_at,
        };
      }),
    };
  }

  async remove(owner: string, query: SessionQuery): Promise<DeleteResult> {
    if (!this.mirrorEnabled)
      throw new AppError(
        "not_implemented",
        "Session delete needs the chat mirror (set APP_CHAT_DATABASE_URL)",
      );
    const row = this.row(owner, query);
    if (!row) return { ok: false, reason: "session-not-owned-or-missing" };
    await this.host.close(owner, row.id);
    this.store.deleteSession(owner, row.id);
    this.removeFile(owner, row.session_file);
    return { ok: true, sessionId: row.id, sessionFile: publicSessionFile(row.session_file) ?? "" };
  }

  async abort(owner: string, query: SessionQuery): Promise<{ aborted: boolean }> {
    const live = this.host.find(owner, sessionTarget(this.sessionsDir(owner), query));
    if (!live || !(live.activeRunId || live.session.isStreaming)) return { aborted: false };
    await live.session.abort();
    return { aborted: true };
  }

  async eraseAccount(owner: string) {
    await this.host.closeOwner(owner);
    const { sessions, providers } = this.store.eraseOwner(owner);
    for (const row of sessions) this.removeFile(owner, row.session_file);
    return {
      ok: true as const,
      scope: "app-mirror" as const,
      erasedSessions: sessions.length,
      erasedProviders: providers,
      message: `Erased ${sessions.length} session${sessions.length === 1 ? "" : "s"} and ${providers} stored provider credential${providers === 1 ? "" : "s"}. Workspace files are not reverted.`,
    };
  }

  answer(owner: string, body: SessionQuery & { toolCallId: string; answer: Answer }): AnswerResult {
    const live = this.host.find(owner, sessionTarget(this.sessionsDir(owner), body));
    if (!live?.broker.has(body.toolCallId))
      return {
        status: 404,
        body: { ok: false, message: `No pending question '${body.toolCallId}' in this session` },
      };
    try {
      live.broker.answer(body.toolCallId, body.answer);
    } catch (error) {
      if (error instanceof AnswerError)
        throw new AppError("invalid", `Invalid request: body.answer: ${error.message}`, {
          issues: [{ loc: ["body", "answer"], msg: error.message, type: "value_error" }],
        });
      throw error;
    }
    return {
      status: 200,
      body: {
        ok: true,
        message: body.answer.kind === "skip" ? "Question skipped" : "Answer recorded",
        mode: live.plan.mode,
        ...(live.plan.executing ? { planAction: "execute" as const } : {}),
      },
    };
  }

  private row(owner: string, query: SessionQuery): SessionRow | undefined {
    if (query.sessionId) return this.store.session(owner, query.sessionId);
    if (!query.sessionFile) return undefined;
    const file = confineSessionFile(this.sessionsDir(owner), query.sessionFile);
    return file ? this.store.sessionByFile(owner, file) : undefined;
  }

  /** Best effort, and only inside the owner's sessions folder. */
  private removeFile(owner: string, sessionFile: string): void {
    const file = sessionFile && confineSessionFile(this.sessionsDir(owner), sessionFile);
    if (file) rmSync(file, { force: true });
  }
}

/** SQLite's stored times as ISO 8601 (they are written as ISO already; older rows may lack the zone). */
function isoTime(value: string): string {
  const time = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(" ", "T")}Z`);
  return Number.isNaN(time) ? new Date(0).toISOString() : new Date(time).toISOString();
}

function describe(live: LiveSession, row: SessionRow | undefined) {
  const model = live.session.model;
  return {
    id: live.sessionId,
    sessionId: live.sessionId,
    sessionFile: publicSessionFile(live.sessionFile),
    title: row?.title ?? "New chat",
    createdAt: row?.created_at,
    updatedAt: row?.updated_at,
    model: model ? `${model.provider}/${model.id}` : null,
    thinkingLevel: live.session.thinkingLevel,
    streaming: live.session.isStreaming,
    plan: live.plan,
    pendingQuestions: live.broker.questions(),
  };
}
