/**
 * The runtime host: a bounded pool of live sessions per process. A session is opened from its JSONL
 * file when a request names it and kept while in use; idle sessions are evicted (least recently used
 * first, and any idle past `idleMs`), and reopening an evicted session resumes from its file. A session
 * that is streaming, or has an attached client, is never evicted.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Api, Model } from "@mariozechner/pi-ai";
import type { SessionManager, SettingsManager } from "@mariozechner/pi-coding-agent";
import type { EnvSource } from "../../config/env.ts";
import type { Logger } from "../../log.ts";
import type { McpClients } from "../../mcp-client/clients.ts";
import { createPiAuth, ensureModelAuth } from "../../models/pi-bridge.ts";
import { loadPi } from "../../models/pi-sdk.ts";
import type { ModelService } from "../../models/service.ts";
import type { SandboxProvider } from "../../sandbox/users/provider-api.ts";
import type { ChatProviderKeyStore } from "../stores/provider-keys.ts";
import type { ChatRunStore } from "../stores/runs.ts";
import type { ChatSessionStore } from "../stores/sessions.ts";
import { chatFolders, ensureChatFolders } from "./chat-folders.ts";
import type { LiveChatSession } from "./live-session.ts";
import { ownerSettings, settingsModelId } from "./pi-settings.ts";
import type { ShellOptions } from "./shell.ts";

export interface HostOptions {
  dataDir: string;
  models: ModelService;
  env: EnvSource;
  log: Logger;
  /** The mirror: the file a session id names, and the session rows it keeps. */
  sessions: ChatSessionStore;
  /** Whether a mirrored session ever ran (one created by /api/chat/new has no file yet). */
  runs: Pick<ChatRunStore, "hasRuns">;
  /** The owner's stored provider keys, for the session's pi auth. */
  providerKeys: Pick<ChatProviderKeyStore, "all">;
  /** Idle sessions kept open at most (busy ones come on top). */
  maxIdleSessions?: number;
  idleMs?: number;
  /** Shell commands on the host: true in local mode only. */
  hostCommands: boolean;
  /** Extensions and packages named in an owner's settings (inside their agent dir): local mode only. */
  settingsCode: boolean;
  /** How shell commands run: the jail's limits and network (policy `[sandbox]`). */
  shell?: ShellOptions;
  /** Protected mode: the users' sandboxes, where the shell and file tools run (sandbox-tools.ts). */
  sandbox?: SandboxProvider;
  /** MCP servers as tools (server/mcp-client/). */
  mcp?: McpClients;
}

export interface SessionTarget {
  /** Already confined to the owner's sessions folder. */
  sessionFile?: string;
  sessionId?: string;
}

export interface Opened {
  live: LiveChatSession;
  sessionReset: boolean;
  diagnostics: string[];
}

export class ChatRuntimeHost {
  private readonly pool = new Map<string, LiveChatSession>();
  private readonly opening = new Map<string, Promise<Opened>>();
  private readonly sweeper: ReturnType<typeof setInterval>;
  readonly maxIdleSessions: number;
  readonly idleMs: number;

  constructor(private readonly options: HostOptions) {
    this.maxIdleSessions = options.maxIdleSessions ?? 32;
    this.idleMs = options.idleMs ?? 10 * 60_000;
    this.sweeper = setInterval(() => this.sweep(), Math.min(this.idleMs, 60_000));
    this.sweeper.unref?.();
  }

  get size(): number {
    return this.pool.size;
  }

  /** A live session already in the pool, without opening anything. */
  find(owner: string, target: SessionTarget): LiveChatSession | undefined {
    for (const live of this.pool.values()) {
      if (live.owner !== owner) continue;
      if (target.sessionId && live.sessionId === target.sessionId) return live.touch();
      if (!target.sessionId && target.sessionFile && live.sessionFile === target.sessionFile)
        return live.touch();
    }
    return undefined;
  }

  /**
   * Opens the named session (from the pool, else from its file), or a fresh one when none is named.
   * A named session that cannot be opened gives a fresh one with `sessionReset`.
   */
  async open(owner: string, target: SessionTarget, model?: Model<Api>): Promise<Opened> {
    const named = Boolean(target.sessionFile || target.sessionId);
    const pooled = named ? this.find(owner, target) : undefined;
    if (pooled) return { live: pooled, sessionReset: false, diagnostics: [] };
    if (!named) return this.load(owner, target, model);
    // Two requests for the same session while it loads must share one pi session (one writer per file).
    const key = keyOf(owner, target.sessionId ?? `file:${target.sessionFile}`);
    const pending = this.opening.get(key);
    if (pending) return { ...(await pending), diagnostics: [] };
    const loading = this.load(owner, target, model);
    this.opening.set(key, loading);
    try {
      return await loading;
    } finally {
      this.opening.delete(key);
    }
  }

  private async load(owner: string, target: SessionTarget, model?: Model<Api>): Promise<Opened> {
    // pi loads on first use, not at startup (see pi-sdk.ts); so does the live session with its tools,
    // guards and plan mode (about 15 modules: docs/benchmarks.md, "Cold start").
    const [{ SessionManager }, { LiveChatSession }] = await Promise.all([
      loadPi(),
      import("./live-session.ts"),
    ]);
    const named = Boolean(target.sessionFile || target.sessionId);
    const paths = chatFolders(this.options.dataDir, owner);
    ensureChatFolders(paths);
    const { sessions, runs, providerKeys } = this.options;
    const row = await sessions.find(owner, target);
    const file = row?.session_file ?? (target.sessionId ? undefined : target.sessionFile);
    let manager: SessionManager | undefined;
    let sessionReset = named;
    const header = file ? sessionHeaderId(file) : undefined;
    if (file && header && (!target.sessionId || header === target.sessionId)) {
      manager = SessionManager.open(file, paths.sessionsDir, paths.workspaceDir);
      sessionReset = false;
    } else if (file && existsSync(file)) {
      // Unreadable, or another session's file: left as it is (pi would rewrite it); a fresh session instead.
    } else if (row && !(await runs.hasRuns(owner, row.id))) {
      // Created by /api/chat/new but never written (pi writes the file with the first reply): same id.
      manager = SessionManager.create(paths.workspaceDir, paths.sessionsDir);
      manager.newSession({ id: row.id });
      sessionReset = false;
    }
    manager ??= SessionManager.create(paths.workspaceDir, paths.sessionsDir);
    const live = new LiveChatSession(
      owner,
      paths,
      await createPiAuth(
        this.options.env,
        await providerKeys.all(owner),
        join(paths.agentDir, "models.json"),
      ),
      this.options.hostCommands,
      this.options.shell,
      this.options.sandbox,
      this.options.mcp,
    );
    const settings = await ownerSettings({ agentDir: paths.agentDir, allowCode: this.options.settingsCode });
    const startModel = model ?? (await this.defaultModel(settings, owner));
    ensureModelAuth(live.auth, this.options.models, startModel);
    const diagnostics = await live.start(manager, startModel, settings);
    await sessions.upsert(owner, live.sessionId, live.sessionFile ?? "");
    this.pool.set(keyOf(owner, live.sessionId), live);
    this.trim();
    return { live, sessionReset, diagnostics };
  }

  /**
   * The model a session starts with: pi settings' default, else ModelService's default with the owner's
   * stored keys (offline last).
   */
  async defaultModel(settings?: SettingsManager, owner?: string): Promise<Model<Api>> {
    const { models, providerKeys } = this.options;
    const stored = owner ? Object.keys(await providerKeys.all(owner)) : [];
    return models.resolve((await models.defaultModel(settingsModelId(settings), stored)).id);
  }

  /** Closes one session (after delete): aborts what runs, drops it from the pool. */
  async close(owner: string, sessionId: string): Promise<void> {
    const key = keyOf(owner, sessionId);
    const live = this.pool.get(key);
    if (!live) return;
    this.pool.delete(key);
    await live.session.abort().catch(() => {});
    live.dispose();
  }

  async closeOwner(owner: string): Promise<void> {
    for (const live of [...this.pool.values()])
      if (live.owner === owner) await this.close(owner, live.sessionId);
  }

  ownerSessions(owner: string): LiveChatSession[] {
    return [...this.pool.values()].filter((l) => l.owner === owner);
  }

  /** Evicts idle sessions past idleMs, then the least recently used idle ones over the bound. */
  sweep(now = Date.now()): number {
    let evicted = 0;
    for (const [key, live] of this.pool) {
      if (!live.busy && now - live.lastUsed > this.idleMs) {
        this.evict(key, live);
        evicted++;
      }
    }
    return evicted + this.trim();
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    for (const [key, live] of [...this.pool]) {
      await live.session.abort().catch(() => {});
      this.evict(key, live);
    }
  }

  private trim(): number {
    const idle = [...this.pool.entries()].filter(([, l]) => !l.busy);
    const excess = idle.length - this.maxIdleSessions;
    if (excess <= 0) return 0;
    idle.sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    for (const [key, live] of idle.slice(0, excess)) this.evict(key, live);
    return excess;
  }

  private evict(key: string, live: LiveChatSession): void {
    this.pool.delete(key);
    live.dispose();
    this.options.log.debug("chat session evicted", { sessionId: live.sessionId });
  }
}

/** The id in a session file's header line, or undefined when the file is missing or not a session file. */
function sessionHeaderId(file: string): string | undefined {
  try {
    const text = readFileSync(file, "utf8");
    const header = JSON.parse(text.slice(0, text.indexOf("\n") === -1 ? undefined : text.indexOf("\n")));
    return header?.type === "session" && typeof header.id === "string" ? header.id : undefined;
  } catch {
    return undefined;
  }
}

function keyOf(owner: string, sessionId: string): string {
  return `${owner}\u0000${sessionId}`;
}
