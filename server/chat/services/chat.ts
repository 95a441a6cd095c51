/**
 * Runs a chat turn: opens the session, applies the model, mode and plan action, prompts pi, and turns
 * the session's events into the run's stream (`start` first, exactly one `done` or `error` last) while
 * the mirror records the run, its tool calls and the files its tools changed. A request that arrives
 * while the session streams is queued as steering or follow-up and answered with one `queue` event.
 *
 * The run belongs to the session, not to the HTTP response: a client disconnect aborts it, and it still
 * finishes (as aborted) in the mirror.
 */

import { join } from "node:path";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { AssistantMessage } from "@mariozechner/pi-ai";
import type { AgentSession, AgentSessionEvent } from "@mariozechner/pi-coding-agent";
import { AppError } from "../../http/errors.ts";
import type { Producer } from "../../http/stream.ts";
import type { Logger } from "../../log.ts";
import { ensureModelAuth, resolveForOwner } from "../../models/pi-bridge.ts";
import { loadPi } from "../../models/pi-sdk.ts";
import type { ModelService } from "../../models/service.ts";
import { ownerPaths, publicSessionFile, scrubPaths } from "../paths.ts";
import type { ChatEvent } from "../runtime/events.ts";
import { planEvent } from "../runtime/events.ts";
import type { RuntimeHost } from "../runtime/host.ts";
import type { LiveSession } from "../runtime/live-session.ts";
import { finishExecution, markDone, planFromReply, startExecution } from "../runtime/plan.ts";
import { AsyncQueue } from "../runtime/queue.ts";
import { turnMessage } from "../runtime/ui-messages.ts";
import type { ChatStore } from "../store.ts";
import { type ChatInput, type PreparedChat, prepareChat } from "./input.ts";

export type ChatOutcome =
  | { kind: "queued"; event: ChatEvent }
  | { kind: "stream"; producer: Producer<ChatEvent> };

const MUTATING_TOOLS = new Set(["write", "edit"]);

export class ChatService {
  constructor(
    private readonly host: RuntimeHost,
    private readonly store: ChatStore,
    private readonly models: ModelService,
    private readonly dataDir: string,
    private readonly log: Logger,
  ) {}

  /** Validates (400 before any stream), opens the session, and either queues or starts a run. */
  async chat(owner: string, input: ChatInput): Promise<ChatOutcome> {
    const paths = ownerPaths(this.dataDir, owner);
    const modelsJson = join(paths.agentDir, "models.json");
    const pi = await loadPi();
    const prepared = prepareChat(input, paths.sessionsDir, (id) =>
      resolveForOwner(pi, this.models, modelsJson, id),
    );
    const { live, sessionReset, diagnostics } = await this.host.open(owner, prepared.target, prepared.model);
    if (live.activeRunId || live.session.isStreaming) {
      if (!prepared.streamingBehavior || !prepared.text)
        throw new AppError(
          "conflict",
          "A run is streaming in this session: send streamingBehavior 'steer' or 'followUp' to queue the message",
        );
      await live.session.prompt(prepared.text, { streamingBehavior: prepared.streamingBehavior });
      return {
        kind: "queued",
        event: {
          type: "queue",
          steering: [...live.session.getSteeringMessages()],
          followUp: [...live.session.getFollowUpMessages()],
        },
      };
    }
    if (prepared.planAction === "execute" && live.plan.todos.length === 0)
      throw new AppError("invalid", "There is no plan to execute in this session: ask in plan mode first");
    return { kind: "stream", producer: this.stream(owner, live, prepared, sessionReset, diagnostics) };
  }

  /** Re-executes a recorded run's prompt (same session, model and mode) as a new run. */
  async rerun(owner: string, runId: string): Promise<ChatOutcome> {
    const run = this.store.run(owner, runId);
    const session = run && this.store.session(owner, run.session_id);
    if (!run || !session) throw new AppError("not_found", `No run '${runId}'`);
    return this.chat(owner, {
      sessionId: session.id,
      message: run.prompt || undefined,
      model: run.model,
      mode: run.mode as ChatInput["mode"],
      planAction: (run.plan_action ?? undefined) as ChatInput["planAction"],
    });
  }

  private stream(
    owner: string,
    live: LiveSession,
    prepared: PreparedChat,
    sessionReset: boolean,
    diagnostics: string[],
  ): Producer<ChatEvent> {
    const runId = crypto.randomUUID();
    // Claimed now, so a second request arriving before the stream is pulled sees the session busy.
    live.activeRunId = runId;
    const paths = ownerPaths(this.dataDir, owner);
    const scrub = (text: string) => scrubPaths(paths, this.dataDir, text);
    const deps: RunDeps = { store: this.store, models: this.models, scrub };
    // The run starts when the response is created, not when the body is first pulled: a client that
    // disconnects before reading still aborts it (the signal) and the session is released.
    return (signal: AbortSignal) => {
      const queue = new AsyncQueue<ChatEvent>();
      const stop = live.listen((event) => queue.push(event));
      const onAbort = () => void live.session.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      const run = execute(owner, live, prepared, runId, { sessionReset, diagnostics, signal }, deps);
      void run
        .catch((error) => this.log.error("chat run failed outside the stream", { runId, error }))
        .finally(() => {
          stop();
          signal.removeEventListener("abort", onAbort);
          queue.end();
        });
      return (async function* () {
        for await (const event of queue) {
          yield event;
          if ((event.type === "done" || event.type === "error") && event.runId === runId) return;
        }
      })();
    };
  }
}

/** The client went away before the prompt was sent. */
class RunAborted extends Error {
  override name = "RunAborted";
  constructor() {
    super("Run aborted");
  }
}

interface RunDeps {
  store: ChatStore;
  models: ModelService;
  /** Server paths out of a message before a client sees it. */
  scrub: (text: string) => string;
}

async function execute(
  owner: string,
  live: LiveSession,
  prepared: PreparedChat,
  runId: string,
  opened: { sessionReset: boolean; diagnostics: string[]; signal: AbortSignal },
  { store, models, scrub }: RunDeps,
): Promise<void> {
  const session = live.session;
  const reset = opened.sessionReset || undefined;
  const mode = prepared.planAction
    ? prepared.planAction === "refine"
      ? "plan"
      : "agent"
    : (prepared.mode ?? live.plan.mode);
  const model = prepared.model ?? session.model;
  const modelId = model ? `${model.provider}/${model.id}` : "none";
  store.startRun(owner, {
    id: runId,
    sessionId: live.sessionId,
    prompt: prepared.text,
    mode,
    planAction: prepared.planAction,
    model: modelId,
    thinkingLevel: prepared.thinkingLevel ?? session.thinkingLevel,
    settings: settingsSnapshot(live),
  });
  store.touchSession(owner, live.sessionId, prepared.text || undefined);
  live.emit({
    type: "start",
    id: runId,
    runId,
    sessionFile: publicSessionFile(live.sessionFile),
    sessionId: live.sessionId,
    ...(reset ? { sessionReset: true } : {}),
    ...(opened.diagnostics.length ? { diagnostics: opened.diagnostics.map(scrub) } : {}),
  });
  store.markFirstEvent(owner, runId);
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
  const stopRaw = live.onRaw((event) => mirror(event));
  const toolArgs = new Map<string, unknown>();
  // The run's model replies and tool results, in order: `done.message` is built from them.
  const replies: AgentMessage[] = [];
  function mirror(event: AgentSessionEvent) {
    if (event.type === "message_end" && event.message.role !== "user") replies.push(event.message);
    if (event.type === "tool_execution_start") {
      toolArgs.set(event.toolCallId, event.args);
      store.startToolCall(owner, runId, event.toolCallId, event.toolName, event.args);
    } else if (event.type === "tool_execution_end") {
      store.finishToolCall(owner, runId, event.toolCallId, event.result, event.isError);
      const path = (toolArgs.get(event.toolCallId) as { path?: unknown } | undefined)?.path;
      if (MUTATING_TOOLS.has(event.toolName) && !event.isError && typeof path === "string")
        store.addFileMutation(owner, runId, event.toolCallId, event.toolName, path);
    } else if (event.type === "message_end" && event.message.role === "assistant") {
      const u = (event.message as AssistantMessage).usage;
      if (u) {
        usage.input += u.input;
        usage.output += u.output;
        usage.cacheRead += u.cacheRead;
        usage.cacheWrite += u.cacheWrite;
        usage.totalTokens += u.totalTokens;
        usage.cost += u.cost?.total ?? 0;
      }
      if (live.plan.executing && markDone(live.plan, assistantText(event.message as AssistantMessage))) {
        live.savePlan(live.plan);
        live.emit(planEvent(live.plan));
      }
    }
  }
  let terminal: ChatEvent;
  try {
    if (prepared.model && (session.model?.provider !== model?.provider || session.model?.id !== model?.id)) {
      ensureModelAuth(live.auth, models, prepared.model);
      await session.setModel(prepared.model);
    }
    if (prepared.thinkingLevel) session.setThinkingLevel(prepared.thinkingLevel);
    applyMode(live, prepared, mode);
    if (opened.signal.aborted) throw new RunAborted();
    await session.prompt(prepared.text || defaultPrompt(prepared));
    await settled(session);
    const final = lastAssistant(session);
    afterRun(live, final);
    if (!final) throw new Error("The model produced no reply");
    if (final.stopReason === "aborted") {
      store.finishRun(owner, runId, { status: "aborted", error: "Run aborted", usage });
      terminal = { type: "error", message: "Run aborted", runId };
    } else if (final.stopReason === "error") {
      const message = scrub(final.errorMessage ?? "The model failed");
      store.finishRun(owner, runId, { status: "failed", error: message, usage });
      terminal = { type: "error", message, runId };
    } else {
      store.finishRun(owner, runId, { status: "completed", usage });
      terminal = {
        type: "done",
        runId,
        message: turnMessage(runId, replies.length ? replies : [final]),
        sessionFile: publicSessionFile(live.sessionFile),
        sessionId: live.sessionId,
        ...(reset ? { sessionReset: true } : {}),
      };
    }
  } catch (error) {
    const aborted = error instanceof RunAborted;
    const message = scrub(error instanceof Error ? error.message : String(error));
    store.finishRun(owner, runId, { status: aborted ? "aborted" : "failed", error: message, usage });
    terminal = { type: "error", message, runId };
  } finally {
    stopRaw();
    live.activeRunId = undefined;
    live.lastUsed = Date.now();
    store.touchSession(owner, live.sessionId);
    // The file may have been created by this run (pi writes it with the first reply).
    if (live.sessionFile) store.upsertSession(owner, live.sessionId, live.sessionFile);
  }
  live.emit(terminal);
}

/**
 * Sets the plan state for this run: a plan action or mode change, persisted before the prompt. Every
 * tool stays offered: the mode's instructions name the allowed ones and pi's tool_call hook refuses the
 * others with a clear tool error (a tool missing from the list would only say "not found").
 */
function applyMode(live: LiveSession, prepared: PreparedChat, mode: LiveSession["plan"]["mode"]): void {
  if (prepared.planAction === "execute") {
    live.savePlan(startExecution(live.plan));
    live.emit(planEvent(live.plan));
  } else if (prepared.planAction === "refine") {
    live.savePlan({
      ...live.plan,
      mode: "plan",
      executing: false,
      pendingDecision: false,
      message: "Refining the plan.",
    });
    live.emit(planEvent(live.plan));
  } else if (mode !== live.plan.mode || (live.plan.executing && prepared.mode)) {
    live.savePlan({ ...live.plan, mode, executing: false, pendingDecision: false });
  }
}

/** After the prompt: a plan-mode reply becomes todos; an execution run reports its progress. */
function afterRun(live: LiveSession, final: AssistantMessage | undefined): void {
  if (final?.stopReason !== "stop") return;
  if (live.plan.mode === "plan") {
    live.savePlan(planFromReply(live.plan, assistantText(final)));
    live.emit(planEvent(live.plan));
  } else if (live.plan.executing) {
    live.savePlan(finishExecution(live.plan));
    live.emit(planEvent(live.plan));
  }
}

function defaultPrompt(prepared: PreparedChat): string {
  return prepared.planAction === "execute" ? "Execute the plan." : "Refine the plan.";
}

function assistantText(message: AssistantMessage): string {
  return message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

function lastAssistant(session: AgentSession): AssistantMessage | undefined {
  const messages = session.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m && "role" in m && m.role === "assistant") return m as AssistantMessage;
  }
  return undefined;
}

/**
 * pi handles agent events on an internal promise chain that can still be running when prompt()
 * resolves (auto-compaction runs there); waiting for it puts `done` after the session's last event.
 */
async function settled(session: AgentSession): Promise<void> {
  const internal = session as unknown as { _agentEventQueue?: Promise<unknown> };
  let seen: Promise<unknown> | undefined;
  while (internal._agentEventQueue && internal._agentEventQueue !== seen) {
    seen = internal._agentEventQueue;
    await seen.catch(() => {});
  }
}

function settingsSnapshot(live: LiveSession): unknown {
  const s = live.settings;
  return {
    compaction: s.getCompactionSettings(),
    retry: s.getRetrySettings(),
    steeringMode: s.getSteeringMode(),
    followUpMode: s.getFollowUpMode(),
    transport: s.getTransport(),
    thinkingLevel: live.session.thinkingLevel,
    activeTools: live.session.getActiveToolNames(),
    planMode: live.plan.mode,
  };
}
