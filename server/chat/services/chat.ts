/**
 * Chat turns: validates a request (400 before any stream), opens its session, and either queues it
 * (a run is streaming: steering or follow-up, answered with one `queue` event) or starts a run whose
 * events become the response's stream: `start` first, exactly one `done` or `error` last (run.ts).
 *
 * The run belongs to the session, not to the HTTP response: a client disconnect aborts it, and it still
 * finishes (as aborted) in the mirror.
 */
import { join } from "node:path";
import { AppError } from "../../http/errors.ts";
import type { Producer } from "../../http/stream.ts";
import type { Logger } from "../../log.ts";
import { resolveForOwner } from "../../models/pi-bridge.ts";
import { loadPi } from "../../models/pi-sdk.ts";
import type { ModelService } from "../../models/service.ts";
import { chatFolders, scrubPaths } from "../runtime/chat-folders.ts";
import type { ChatEvent } from "../runtime/events.ts";
import type { ChatRuntimeHost } from "../runtime/host.ts";
import type { LiveChatSession } from "../runtime/live-session.ts";
import { AsyncQueue } from "../runtime/queue.ts";
import type { ChatRunStore } from "../stores/runs.ts";
import type { ChatSessionStore } from "../stores/sessions.ts";
import { type ChatInput, type PreparedChat, prepareChat } from "./input.ts";
import { executeRun, type RunStart } from "./run.ts";

export type { ChatEvent };

export type ChatOutcome =
  | { kind: "queued"; event: ChatEvent }
  | { kind: "stream"; producer: Producer<ChatEvent> };

export interface ChatServiceDeps {
  host: Pick<ChatRuntimeHost, "open" | "defaultModel">;
  sessions: Pick<ChatSessionStore, "get" | "touch" | "upsert">;
  runs: ChatRunStore;
  models: ModelService;
  dataDir: string;
  log: Logger;
}

export class ChatService {
  constructor(private readonly deps: ChatServiceDeps) {}

  /** Validates (400 before any stream), opens the session, and either queues or starts a run. */
  async chat(owner: string, input: ChatInput): Promise<ChatOutcome> {
    const { host, models, dataDir } = this.deps;
    const paths = chatFolders(dataDir, owner);
    const modelsJson = join(paths.agentDir, "models.json");
    const pi = await loadPi();
    const prepared = await prepareChat(input, paths.sessionsDir, (id) =>
      resolveForOwner(pi, models, modelsJson, id),
    );
    // Ollama's default is a model it has pulled: ask it what it has (cached for a few seconds).
    if (!prepared.model) await models.refreshLocalModels();
    const { live, sessionReset, diagnostics } = await host.open(owner, prepared.target, prepared.model);
    // A session that started offline moves to a real model as soon as one is configured (a stored key
    // is used at once; no restart).
    if (!prepared.model && live.session.model?.provider === "offline") {
      const next = await host.defaultModel(live.settings, owner);
      if (next.provider !== "offline") prepared.model = next;
    }
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
    return { kind: "stream", producer: this.stream(owner, live, prepared, { sessionReset, diagnostics }) };
  }

  /** Re-executes a recorded run's prompt (same session, model and mode) as a new run. */
  async rerun(owner: string, runId: string): Promise<ChatOutcome> {
    const run = await this.deps.runs.get(owner, runId);
    const session = run && (await this.deps.sessions.get(owner, run.session_id));
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
    live: LiveChatSession,
    prepared: PreparedChat,
    opened: Omit<RunStart, "signal">,
  ): Producer<ChatEvent> {
    const { sessions, runs, models, dataDir, log } = this.deps;
    const runId = crypto.randomUUID();
    // Claimed now, so a second request arriving before the stream is pulled sees the session busy.
    live.activeRunId = runId;
    const paths = chatFolders(dataDir, owner);
    const scrub = (text: string) => scrubPaths(paths, dataDir, text);
    // The run starts when the response is created, not when the body is first pulled: a client that
    // disconnects before reading still aborts it (the signal) and the session is released.
    return (signal: AbortSignal) => {
      const queue = new AsyncQueue<ChatEvent>();
      const stop = live.listen((event) => queue.push(event));
      const onAbort = () => void live.session.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      const run = executeRun(
        owner,
        live,
        prepared,
        runId,
        { ...opened, signal },
        { sessions, runs, models, scrub },
      );
      void run
        .catch((error) => log.error("chat run failed outside the stream", { runId, error }))
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
