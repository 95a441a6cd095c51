/**
 * Session lifecycle: new, resume/hydrate, list, delete, abort, account erase, and answering a pending
 * question. Every lookup is by owner: another owner's session is "missing", never visible.
 */
import { rmSync } from "node:fs";
import type { SessionInfo } from "@mariozechner/pi-coding-agent";
import { AppError, invalidValue } from "../../http/errors.ts";
import type { Page } from "../../http/paging.ts";
import { loadPi } from "../../models/pi-sdk.ts";
import {
  chatFolders,
  confineSessionFile,
  publicPath,
  publicSessionFile,
  scrubPaths,
} from "../runtime/chat-folders.ts";
import type { ChatRuntimeHost } from "../runtime/host.ts";
import type { LiveChatSession } from "../runtime/live-session.ts";
import { AnswerError, type QuestionnaireAnswer } from "../runtime/questionnaire.ts";
import { sessionMessages } from "../runtime/ui-messages.ts";
import type { ChatStore } from "../stores/index.ts";
import type { ChatSessionRow } from "../stores/sessions.ts";
import { type SessionQuery, sessionTarget } from "./input.ts";

export type DeleteResult =
  | { ok: true; sessionId: string; sessionFile: string }
  | { ok: false; reason: "session-not-owned-or-missing" };

export type AnswerResult =
  | { ok: true; message: string; mode: "agent" | "plan" | "harness"; planAction?: "execute" }
  | { ok: false; message: string };

export interface ChatSessionServiceDeps {
  host: Pick<ChatRuntimeHost, "open" | "find" | "close" | "closeOwner">;
  mirror: Pick<ChatStore, "sessions" | "eraseOwner">;
  dataDir: string;
  /** False in protected mode without APP_CHAT_DATABASE_URL: session delete answers 501. */
  mirrorEnabled: boolean;
}

export class ChatSessionService {
  constructor(private readonly deps: ChatSessionServiceDeps) {}

  private sessionsDir(owner: string): string {
    return chatFolders(this.deps.dataDir, owner).sessionsDir;
  }

  /** The contract's `{sessionFile, sessionId}`, and the same as a hydrated session (`session`, `messages`). */
  async create(owner: string) {
    const { live } = await this.deps.host.open(owner, {});
    const ref = { sessionFile: publicSessionFile(live.sessionFile) ?? "", sessionId: live.sessionId };
    return { ...ref, session: { ...ref }, messages: [] };
  }

  /** Opens (or reopens) a session and returns it with its messages; a lost session comes back fresh. */
  async hydrate(owner: string, query: SessionQuery) {
    const target = sessionTarget(this.sessionsDir(owner), query);
    if (!target.sessionFile && !target.sessionId) {
      const latest = (await this.deps.mirror.sessions.list(owner, 1, 0))[0];
      if (latest) target.sessionId = latest.id;
    }
    const { live, sessionReset } = await this.deps.host.open(owner, target);
    return this.view(owner, live, sessionReset);
  }

  /**
   * `GET /api/chat/session`: one of the owner's sessions with its messages, never a new one. A GET is
   * what a link or an image in a message makes the browser send, so it must not create sessions in the
   * viewer's account: an id (or file) that names none of the owner's sessions is 404, as is asking for
   * the latest when there is none. A named session whose file turns out unreadable would come back
   * fresh from the runtime (what POST /api/chat/resume answers): that fresh one is closed and forgotten
   * again, and the answer is 404.
   */
  async show(owner: string, query: SessionQuery) {
    const target = sessionTarget(this.sessionsDir(owner), query);
    const { sessions } = this.deps.mirror;
    if (!target.sessionFile && !target.sessionId)
      target.sessionId = (await sessions.list(owner, 1, 0))[0]?.id;
    const known = target.sessionId || target.sessionFile;
    if (!known || !(this.deps.host.find(owner, target) || (await sessions.find(owner, target))))
      throw AppError.notFound("No such chat session");
    const { live, sessionReset } = await this.deps.host.open(owner, target);
    if (sessionReset) {
      await this.deps.host.close(owner, live.sessionId);
      await sessions.delete(owner, live.sessionId);
      throw AppError.notFound("No such chat session");
    }
    return this.view(owner, live, false);
  }

  private async view(owner: string, live: LiveChatSession, sessionReset: boolean) {
    return {
      session: describe(live, await this.deps.mirror.sessions.get(owner, live.sessionId)),
      messages: sessionMessages(live.session.sessionManager.getBranch(), (text) =>
        scrubPaths(chatFolders(this.deps.dataDir, owner), this.deps.dataDir, text),
      ),
      sessionReset,
    };
  }

  /**
   * The owner's sessions, newest first: the mirror's rows with what the session files say (message count,
   * first message, name). Paths are relative to the owner's folders (`sessions/<file>`, `workspace`).
   */
  async list(owner: string, { limit, offset }: Page) {
    const rows = await this.deps.mirror.sessions.list(owner, limit, offset);
    const paths = chatFolders(this.deps.dataDir, owner);
    const files = new Map<string, SessionInfo>();
    if (rows.some((row) => row.session_file)) {
      const { SessionManager } = await loadPi();
      for (const info of await SessionManager.list(paths.workspaceDir, paths.sessionsDir))
        files.set(info.path, info);
    }
    return {
      sessions: rows.map((row) => {
        const info = files.get(row.session_file);
        const sessionFile = publicSessionFile(row.session_file) ?? "";
        return {
          // What a client sends back as sessionFile to resume it.
          path: sessionFile,
          id: row.id,
          cwd: publicPath(paths, paths.workspaceDir),
          ...(info?.name ? { name: info.name } : {}),
          created: isoTime(row.created_at),
          modified: isoTime(row.updated_at),
          messageCount: info?.messageCount ?? 0,
          firstMessage: info?.firstMessage.trim() || (row.title ?? ""),
          sessionId: row.id,
          sessionFile,
          title: row.title ?? "New chat",
          createdAt: row.created_at,
          updatedAt: row.updated_at,
        };
      }),
    };
  }

  async remove(owner: string, query: SessionQuery): Promise<DeleteResult> {
    if (!this.deps.mirrorEnabled)
      throw new AppError(
        "not_implemented",
        "Session delete needs the chat mirror (set APP_CHAT_DATABASE_URL)",
      );
    const row = await mirrorCall(() => this.row(owner, query));
    if (!row) return { ok: false, reason: "session-not-owned-or-missing" };
    await this.deps.host.close(owner, row.id);
    // The row goes first: when the mirror cannot write, the file stays and the session is still listed.
    await mirrorCall(() => this.deps.mirror.sessions.delete(owner, row.id));
    this.removeFile(owner, row.session_file);
    return { ok: true, sessionId: row.id, sessionFile: publicSessionFile(row.session_file) ?? "" };
  }

  async abort(owner: string, query: SessionQuery): Promise<{ aborted: boolean }> {
    const live = this.deps.host.find(owner, sessionTarget(this.sessionsDir(owner), query));
    if (!live || !(live.activeRunId || live.session.isStreaming)) return { aborted: false };
    await live.session.abort();
    return { aborted: true };
  }

  async eraseAccount(owner: string) {
    await this.deps.host.closeOwner(owner);
    // The session files go once the rows are gone for good: a failed erase leaves every chat listed and readable.
    const { sessions, providers } = await this.deps.mirror.eraseOwner(owner, (erased) => {
      for (const row of erased.sessions) this.removeFile(owner, row.session_file);
    });
    return {
      ok: true as const,
      scope: "app-mirror" as const,
      erasedSessions: sessions.length,
      erasedProviders: providers,
      message: `Erased ${sessions.length} session${sessions.length === 1 ? "" : "s"} and ${providers} stored provider credential${providers === 1 ? "" : "s"}. Workspace files are not reverted.`,
    };
  }

  /** Delivers an answer to a pending question; `ok: false` when there is none by that id. */
  answer(
    owner: string,
    body: SessionQuery & { toolCallId: string; answer: QuestionnaireAnswer },
  ): AnswerResult {
    const live = this.deps.host.find(owner, sessionTarget(this.sessionsDir(owner), body));
    if (!live?.broker.has(body.toolCallId))
      return { ok: false, message: `No pending question '${body.toolCallId}' in this session` };
    try {
      live.broker.answer(body.toolCallId, body.answer);
    } catch (error) {
      if (error instanceof AnswerError) throw invalidValue(["body", "answer"], error.message);
      throw error;
    }
    return {
      ok: true,
      message: body.answer.kind === "skip" ? "Question skipped" : "Answer recorded",
      mode: live.plan.mode,
      ...(live.plan.executing ? { planAction: "execute" as const } : {}),
    };
  }

  /** The mirrored row a reference names; a file outside the caller's folder names none. */
  private row(owner: string, query: SessionQuery): Promise<ChatSessionRow | undefined> {
    const sessionFile = query.sessionFile && confineSessionFile(this.sessionsDir(owner), query.sessionFile);
    return this.deps.mirror.sessions.find(owner, {
      sessionId: query.sessionId,
      sessionFile: sessionFile || undefined,
    });
  }

  /** Best effort, and only inside the owner's sessions folder. */
  private removeFile(owner: string, sessionFile: string): void {
    const file = sessionFile && confineSessionFile(this.sessionsDir(owner), sessionFile);
    if (file) rmSync(file, { force: true });
  }
}

/**
 * A mirror read or write; the database failing under it (SQLite locked by another process, read-only,
 * an I/O error; PostgreSQL unreachable, shutting down or read-only) is the contract's 503 "mirror
 * unavailable", not a 500.
 */
async function mirrorCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const code = unavailableCode(error);
    if (code)
      throw new AppError(
        "unavailable",
        `The chat mirror database is unavailable (${code}); nothing was deleted`,
      );
    throw error;
  }
}

/**
 * The engine's code when an error says the database cannot serve now (not that the statement is wrong):
 * any SQLite error code; PostgreSQL's connection errors (Bun.SQL's ERR_POSTGRES_CONNECTION_*) and the
 * SQLSTATE classes 08 (connection), 53 (resources), 57 (shut down, cancelled), 25006 (read-only) and
 * 55P03 (a lock another connection holds, past lock_timeout: SQLite's SQLITE_BUSY).
 */
function unavailableCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, errno, name } = error as { code?: unknown; errno?: unknown; name?: unknown };
  if (typeof code === "string" && code.startsWith("SQLITE_")) return code;
  if (typeof code === "string" && code.startsWith("ERR_POSTGRES_CONNECTION")) return code;
  if (name === "PostgresError" && typeof errno === "string" && /^(08|53|57)|^(25006|55P03)$/.test(errno))
    return errno;
  return undefined;
}

/** SQLite's stored times as ISO 8601 (written as ISO; a row without a zone is UTC). */
function isoTime(value: string): string {
  const time = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(" ", "T")}Z`);
  return Number.isNaN(time) ? new Date(0).toISOString() : new Date(time).toISOString();
}

function describe(live: LiveChatSession, row: ChatSessionRow | undefined) {
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
