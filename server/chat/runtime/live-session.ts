/**
 * One open chat session: the pi AgentSession (created with the SDK over the owner's session file,
 * settings, resource loader and auth), its plan state, its pending questions, and the fan-out of its
 * events: every mapped event goes to the current run's stream and to attached clients, and is kept in a
 * bounded buffer so an attached client can resume with Last-Event-ID.
 */

import { posix } from "node:path";
import type { Api, Model } from "@mariozechner/pi-ai";
import type {
  AgentSession,
  AgentSessionEvent,
  ExtensionFactory,
  SessionManager,
  SettingsManager,
} from "@mariozechner/pi-coding-agent";
import type { PlanState } from "../../../schemas/chat-records.ts";
import type { McpClients } from "../../mcp-client/clients.ts";
import type { PiAuth } from "../../models/pi-bridge.ts";
import { loadPi } from "../../models/pi-sdk.ts";
import type { SandboxProvider } from "../../sandbox/users/provider-api.ts";
import type { ChatFolders } from "./chat-folders.ts";
import { type ChatEvent, ChatEventMapper } from "./events.ts";
import { workspaceFileTools } from "./file-tools.ts";
import { toolRefusal } from "./guard.ts";
import { chatMcpTools } from "./mcp-tools.ts";
import {
  ALL_TOOLS,
  initialPlanState,
  isPlanState,
  modeInstructions,
  PLAN_ENTRY_TYPE,
  planRefusal,
  QUESTIONNAIRE_TOOL,
} from "./plan.ts";
import { modelFacingPrompt } from "./prompt-paths.ts";
import { type Question, QuestionBroker, questionnaireTool } from "./questionnaire.ts";
import { LABELLED, loadResources, type OwnerResourceLoader, resourceDiagnostics } from "./resources.ts";
import { sandboxPathRefusal, sandboxTools } from "./sandbox-tools.ts";
import { type ShellOptions, workspaceBashTool } from "./shell.ts";
import { toolCallPart } from "./ui-messages.ts";
import { webFetchTool } from "./web-fetch/tool.ts";

export interface BufferedEvent {
  seq: number;
  event: ChatEvent;
}

type Listener = (event: ChatEvent, seq: number) => void;
type RawListener = (event: AgentSessionEvent) => void;

const BUFFER_LIMIT = 512;

export class LiveChatSession {
  session!: AgentSession;
  settings!: SettingsManager;
  resources!: OwnerResourceLoader;
  plan: PlanState = initialPlanState();
  readonly broker: QuestionBroker;
  /** The run streaming now (one at a time per session). */
  activeRunId: string | undefined;
  /** Clients attached through /api/attach: an attached session is not evicted. */
  attached = 0;
  lastUsed = Date.now();
  private seq = 0;
  private readonly buffer: BufferedEvent[] = [];
  private readonly listeners = new Set<Listener>();
  private readonly rawListeners = new Set<RawListener>();
  private readonly mapper = new ChatEventMapper(() => this.activeRunId);
  private unsubscribe: (() => void) | undefined;
  /** The MCP tools of this session: allowed in agent mode only (they may change anything). */
  private mcpToolNames = new Set<string>();

  constructor(
    readonly owner: string,
    readonly paths: ChatFolders,
    readonly auth: PiAuth,
    /** Whether shell commands may run on the host (local mode). */
    private readonly hostCommands: boolean,
    private readonly shell: ShellOptions = {},
    /** Protected mode with a sandbox: the shell and file tools run in the owner's sandbox. */
    private readonly sandbox?: SandboxProvider,
    /** MCP servers as tools (the operator's and the owner's). */
    private readonly mcp?: McpClients,
  ) {
    this.broker = new QuestionBroker((question) => this.emit(questionState(question)));
  }

  get sessionId(): string {
    return this.session.sessionId;
  }

  get sessionFile(): string | undefined {
    return this.session.sessionFile;
  }

  get busy(): boolean {
    return this.activeRunId !== undefined || this.session.isStreaming || this.attached > 0;
  }

  emit(event: ChatEvent): void {
    const seq = ++this.seq;
    this.buffer.push({ seq, event });
    if (this.buffer.length > BUFFER_LIMIT) this.buffer.shift();
    for (const listener of this.listeners) listener(event, seq);
  }

  listen(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onRaw(listener: RawListener): () => void {
    this.rawListeners.add(listener);
    return () => this.rawListeners.delete(listener);
  }

  /** Buffered events after `seq` (all of them when the buffer no longer reaches back that far). */
  since(seq: number): BufferedEvent[] {
    return this.buffer.filter((b) => b.seq > seq);
  }

  /** Marks the session used now (the pool evicts the least recently used idle sessions first). */
  touch(): this {
    this.lastUsed = Date.now();
    return this;
  }

  get lastSeq(): number {
    return this.seq;
  }

  /** Changes the plan state and persists it as a custom entry in the session file. */
  savePlan(state: PlanState): void {
    this.plan = state;
    this.session.sessionManager.appendCustomEntry(PLAN_ENTRY_TYPE, state);
  }

  dispose(): void {
    this.unsubscribe?.();
    this.listeners.clear();
    this.rawListeners.clear();
    this.session.dispose();
  }

  /** Creates the AgentSession over a session manager; the model is the one the session starts with. */
  async start(
    sessionManager: SessionManager,
    model: Model<Api>,
    settings: SettingsManager,
  ): Promise<string[]> {
    const { workspaceDir, agentDir } = this.paths;
    this.settings = settings;
    // Paths in the model's context are the model's own: the sandbox's when its tools run there, else
    // relative to the workspace (the tools' and the shell's working dir); never the server's.
    const sandboxWorkspace = this.sandbox?.workspace;
    const shown = {
      workspace: (relative: string) =>
        sandboxWorkspace ? posix.join(sandboxWorkspace, relative) : relative || ".",
      agent: LABELLED.agent,
    };
    const loader = await loadResources(this.paths, settings, [this.modeExtension()], shown);
    this.resources = loader;
    const { createAgentSession } = await loadPi();
    // pi runs a batch of parallel tool calls' hooks before any of them: a shell command in the batch
    // (which may add a symlink) makes the batch sequential, so each path is checked after it ran.
    const tools = this.sandbox
      ? await sandboxTools(this.sandbox, this.owner, settings.getImageAutoResize())
      : [
          { ...(await workspaceBashTool(workspaceDir, this.shell)), executionMode: "sequential" as const },
          ...(await workspaceFileTools(workspaceDir, settings)),
        ];
    const mcp = this.mcp
      ? await chatMcpTools(this.mcp, this.owner, (question, signal) => this.broker.ask(question, signal))
      : { tools: [], diagnostics: [] };
    this.mcpToolNames = new Set(mcp.tools.map((tool) => tool.name));
    const { session, modelFallbackMessage } = await createAgentSession({
      // The model sees the sandbox's paths when its tools run there.
      cwd: this.sandbox?.workspace ?? workspaceDir,
      agentDir,
      authStorage: this.auth.authStorage,
      modelRegistry: this.auth.modelRegistry,
      model,
      tools: [...ALL_TOOLS, ...this.mcpToolNames],
      customTools: [questionnaireTool(this.broker), ...tools, webFetchTool(), ...mcp.tools],
      resourceLoader: loader,
      sessionManager,
      settingsManager: this.settings,
    });
    this.session = session;
    this.plan = restorePlan(sessionManager) ?? initialPlanState();
    this.unsubscribe = session.subscribe((event) => {
      for (const raw of this.rawListeners) raw(event);
      const mapped = this.mapper.map(event);
      if (mapped) this.emit(mapped);
    });
    const diagnostics = [...resourceDiagnostics(loader), ...mcp.diagnostics];
    if (modelFallbackMessage) diagnostics.push(modelFallbackMessage);
    return diagnostics;
  }

  /**
   * pi extension hooks: `/skill:name` is expanded from a read beneath the skill's folder (pi would read
   * the file by its path); the system prompt the model gets names no server path and carries the mode's
   * instructions; disallowed tools are refused.
   */
  private modeExtension(): ExtensionFactory {
    return (pi) => {
      pi.on("input", (event) => {
        const expanded = this.resources.expandSkill(event.text);
        return expanded === undefined ? { action: "continue" } : { action: "transform", text: expanded };
      });
      pi.on("before_agent_start", (event) => {
        const extra = modeInstructions(this.plan);
        const prompt = modelFacingPrompt(event.systemPrompt, {
          cwd: this.sandbox?.workspace ?? this.paths.workspaceDir,
          shownCwd: this.sandbox?.workspace ?? ".",
        });
        return { systemPrompt: extra ? `${prompt}\n\n${extra}` : prompt };
      });
      pi.on("tool_call", (event) => {
        if (this.mcpToolNames.has(event.toolName))
          return this.plan.mode === "agent"
            ? undefined
            : { block: true, reason: `MCP tools are not available in ${this.plan.mode} mode.` };
        const reason =
          planRefusal(this.plan, event.toolName) ??
          (this.sandbox
            ? sandboxPathRefusal(this.sandbox.workspace, event.toolName, event.input)
            : toolRefusal(
                { workspaceDir: this.paths.workspaceDir, hostCommands: this.hostCommands },
                event.toolName,
                event.input,
              ));
        return reason ? { block: true, reason } : undefined;
      });
    };
  }
}

/** A question waiting for its answer: the questionnaire's tool part again, with the question's ids. */
function questionState(question: Question): ChatEvent {
  const args = {
    question: question.prompt,
    kind: question.kind,
    id: question.questionId,
    options: question.options,
  };
  return {
    type: "tool",
    part: { ...toolCallPart(question.toolCallId, QUESTIONNAIRE_TOOL, args), question, awaitingAnswer: true },
  };
}

function restorePlan(sessionManager: SessionManager): PlanState | undefined {
  const entries = sessionManager.getEntries();
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (entry?.type === "custom" && entry.customType === PLAN_ENTRY_TYPE && isPlanState(entry.data))
      return entry.data;
  }
  return undefined;
}
