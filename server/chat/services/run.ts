/**
 * One chat run, from the prompt to its terminal event: records the run in the mirror, applies the
 * model, thinking level and mode, prompts pi, mirrors tool calls, file mutations and usage as pi's
 * events arrive, advances the plan, and emits exactly one `done` or `error` on the live session (which
 * fans it out to the run's stream and to attached clients). A failure of any step ends the run as
 * failed (aborted when the client left first) with the message scrubbed of server paths.
 */
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { AssistantMessage } from "@mariozechner/pi-ai";
import type { AgentSession, AgentSessionEvent } from "@mariozechner/pi-coding-agent";
import { ensureModelAuth } from "../../models/pi-bridge.ts";
import { replyText } from "../../models/reply.ts";
import type { ModelService } from "../../models/service.ts";
import { publicSessionFile } from "../runtime/chat-folders.ts";
import { type ChatEvent, planEvent } from "../runtime/events.ts";
import type { LiveChatSession } from "../runtime/live-session.ts";
import { finishExecution, markDone, planFromReply, startExecution } from "../runtime/plan.ts";
import { turnMessage } from "../runtime/ui-messages.ts";
import type { ChatRunStore } from "../stores/runs.ts";
import type { ChatSessionStore } from "../stores/sessions.ts";
import type { PreparedChat } from "./input.ts";

const MUTATING_TOOLS = new Set(["write", "edit"]);

/** The client went away before the prompt was sent. */
class RunAborted extends Error {
  override name = "RunAborted";
  constructor() {
    super("Run aborted");
  }
}

/** What a run needs besides its session: the mirror's stores, the models, a path scrubber. */
export interface RunDeps {
  sessions: Pick<ChatSessionStore, "touch" | "upsert">;
  runs: ChatRunStore;
  models: ModelService;
  /** Server paths out of a message before a client sees it. */
  scrub: (text: string) => string;
}

/** How the session was opened for this run, and the signal of the client that asked for it. */
export interface RunStart {
  sessionReset: boolean;
  diagnostics: string[];
  signal: AbortSignal;
}

export async function executeRun(
  owner: string,
  live: LiveChatSession,
  prepared: PreparedChat,
  runId: string,
  opened: RunStart,
  { sessions, runs, models, scrub }: RunDeps,
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
  await runs.start(owner, {
    id: runId,
    sessionId: live.sessionId,
    prompt: prepared.text,
    mode,
    planAction: prepared.planAction,
    model: modelId,
    thinkingLevel: prepared.thinkingLevel ?? session.thinkingLevel,
    settings: settingsSnapshot(live),
  });
  await sessions.touch(owner, live.sessionId, prepared.text || undefined);
  live.emit({
    type: "start",
    id: runId,
    runId,
    sessionFile: publicSessionFile(live.sessionFile),
    sessionId: live.sessionId,
    ...(reset ? { sessionReset: true } : {}),
    ...(opened.diagnostics.length ? { diagnostics: opened.diagnostics.map(scrub) } : {}),
  });
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
  const stopRaw = live.onRaw((event) => mirror(event));
  const toolArgs = new Map<string, unknown>();
  // The run's model replies and tool results, in order: `done.message` is built from them.
  const replies: AgentMessage[] = [];
  // Set when a local server stopped accepting connections mid-run (its retries are cut short).
  let localFailure: string | undefined;
  // pi's events arrive synchronously; their mirror writes run one after another in arrival order (a
  // tool call's end never overtakes its start on another pooled connection), and the run awaits them
  // all before its terminal event, so provenance read after `done` is complete.
  let mirrored: Promise<unknown> = Promise.resolve();
  let mirrorFailure: unknown;
  const write = (fn: () => Promise<unknown>) => {
    mirrored = mirrored.then(fn).catch((error) => {
      mirrorFailure ??= error;
    });
  };
  // Queued, not awaited: from `start` on a client may send a follow-up, which must find pi prompting
  // already (no database round trip between the two).
  write(() => runs.markFirstEvent(owner, runId));
  function mirror(event: AgentSessionEvent) {
    if (event.type === "auto_retry_start" && session.model) {
      const current = session.model;
      void models.localRefusal(current).then((reason) => {
        if (!reason) return;
        localFailure = reason;
        session.abortRetry();
      });
    }
    if (event.type === "message_end" && event.message.role !== "user") replies.push(event.message);
    if (event.type === "tool_execution_start") {
      toolArgs.set(event.toolCallId, event.args);
      write(() => runs.startToolCall(owner, runId, event.toolCallId, event.toolName, event.args));
    } else if (event.type === "tool_execution_end") {
      write(() => runs.finishToolCall(owner, runId, event.toolCallId, event.result, event.isError));
      const path = (toolArgs.get(event.toolCallId) as { path?: unknown } | undefined)?.path;
      if (MUTATING_TOOLS.has(event.toolName) && !event.isError && typeof path === "string")
        write(() => runs.addFileMutation(owner, runId, event.toolCallId, event.toolName, path));
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
      if (live.plan.executing && markDone(live.plan, replyText(event.message as AssistantMessage))) {
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
    // A local server that refuses the connection is not running: say so now, not after the retries.
    const refused = session.model && (await models.localRefusal(session.model));
    if (refused) throw new Error(refused);
    await session.prompt(prepared.text || defaultPrompt(prepared));
    await settled(session);
    const final = lastAssistant(session);
    afterRun(live, final);
    await mirrored;
    if (mirrorFailure) throw mirrorFailure;
    if (!final) throw new Error("The model produced no reply");
    if (final.stopReason === "aborted") {
      await runs.finish(owner, runId, { status: "aborted", error: "Run aborted", usage });
      terminal = { type: "error", message: "Run aborted", runId };
    } else if (final.stopReason === "error") {
      const message = scrub(localFailure ?? final.errorMessage ?? "The model failed");
      await runs.finish(owner, runId, { status: "failed", error: message, usage });
      terminal = { type: "error", message, runId };
    } else {
      await runs.finish(owner, runId, { status: "completed", usage });
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
    await mirrored;
    await runs.finish(owner, runId, { status: aborted ? "aborted" : "failed", error: message, usage });
    terminal = { type: "error", message, runId };
  } finally {
    stopRaw();
    live.activeRunId = undefined;
    live.touch();
    await sessions.touch(owner, live.sessionId);
    // The file may have been created by this run (pi writes it with the first reply).
    if (live.sessionFile) await sessions.upsert(owner, live.sessionId, live.sessionFile);
  }
  live.emit(terminal);
}

/**
 * Sets the plan state for this run: a plan action or mode change, persisted before the prompt. Every
 * tool stays offered: the mode's instructions name the allowed ones and pi's tool_call hook refuses the
 * others with a clear tool error (a tool missing from the list would only say "not found").
 */
function applyMode(
  live: LiveChatSession,
  prepared: PreparedChat,
  mode: LiveChatSession["plan"]["mode"],
): void {
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
function afterRun(live: LiveChatSession, final: AssistantMessage | undefined): void {
  if (final?.stopReason !== "stop") return;
  if (live.plan.mode === "plan") {
    live.savePlan(planFromReply(live.plan, replyText(final)));
    live.emit(planEvent(live.plan));
  } else if (live.plan.executing) {
    live.savePlan(finishExecution(live.plan));
    live.emit(planEvent(live.plan));
  }
}

function defaultPrompt(prepared: PreparedChat): string {
  return prepared.planAction === "execute" ? "Execute the plan." : "Refine the plan.";
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

function settingsSnapshot(live: LiveChatSession): unknown {
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
