/**
 * Opening a turn (spec "Turn stream lifecycle"): preparation keep-alives while the turn is claimed and
 * its interpreter made ready, then either the live run, a replay of the committed run for a repeated
 * Idempotency-Key, or a preparation failure (`turn_error` then `turn_finish`) with the spec's messages.
 */
import { newId } from "../lib/ids.ts";
import { UnknownModelError } from "../models/service.ts";
import { SandboxKilled } from "../sandbox/interpreter.ts";
import { SandboxQueueTimeout } from "../sandbox/pool.ts";
import type { TurnEvent } from "./events.ts";
import type { TurnInput } from "./history.ts";
import { LiveRun } from "./live-run.ts";
import { keepAlive, SandboxLine } from "./preparation.ts";
import { childRunner } from "./runtime/children.ts";
import { hostToolHandler, toolNames, UNTIMED_TOOLS } from "./runtime/host-tools.ts";
import { systemPrompt } from "./runtime/prompt.ts";
import { Repl } from "./runtime/repl.ts";
import { UsageMeter } from "./runtime/usage.ts";
import type { TurnServices } from "./services.ts";
import { SKILLS, type Skill, skillById } from "./skills/catalog.ts";
import { fingerprint, PreparationError, replayable } from "./turn-input.ts";
import { emitterFor, executeTurn } from "./turn-runner.ts";

/** Why the turn's interpreter could not be opened, as the stream says it. */
function openingFailure(reason: "timeout" | Error, stopping: boolean): PreparationError {
  if (stopping) return new PreparationError("Turn is unavailable", "server_stopping");
  if (reason === "timeout") return new PreparationError("Turn preparation timed out", "preparation_timeout");
  if (reason instanceof SandboxQueueTimeout)
    return new PreparationError("Turn is unavailable", "sandbox_queue_timeout");
  if (reason instanceof SandboxKilled && reason.reason === "start_timeout")
    return new PreparationError("Turn is unavailable", "sandbox_start_timeout");
  return new PreparationError("Turn is unavailable", "sandbox_unavailable");
}

type Prepared = { kind: "replay"; events: TurnEvent[] } | { kind: "live"; live: LiveRun };

const TEXT_MEDIA = /^(text\/|application\/(json|xml|x-ndjson|csv|yaml|x-yaml|toml)\b)/;

export class TurnService {
  constructor(private readonly services: TurnServices) {}

  /**
   * The whole stream of one POST: preparation keep-alives, then the turn's events. `signal` is the
   * client's (gone: stop streaming, the turn goes on); at `shutdown` the stream still ends with one
   * terminal event (the live run fails with `server_stopping`) before the server closes it.
   */
  async *open(
    owner: string,
    sessionId: string,
    key: string,
    input: TurnInput,
    signal: AbortSignal,
    shutdown: AbortSignal,
  ): AsyncGenerator<TurnEvent> {
    const { runtime } = this.services.settings;
    const started = Date.now();
    const line = new SandboxLine();
    const timeout = new AbortController();
    const outcome = yield* keepAlive(this.prepare(owner, sessionId, key, input, timeout.signal, line), {
      started,
      heartbeatMs: runtime.heartbeat_seconds * 1000,
      timeoutMs: runtime.preparation_timeout_seconds * 1000,
      line,
      signal,
      timeout,
      shutdown,
    });
    if (!outcome) return;
    if ("error" in outcome) {
      const error = outcome.error;
      const failure =
        error instanceof PreparationError
          ? error
          : new PreparationError("Turn is unavailable", "turn_unavailable");
      if (!(error instanceof PreparationError)) this.services.log.error("turn preparation failed", { error });
      this.services.analytics.capture("turn_failed", { phase: "open", code: failure.code });
      const durationMs = Date.now() - started;
      yield { type: "turn_error", message: failure.message, code: failure.code, durationMs };
      yield {
        type: "turn_finish",
        finishReason: "error",
        status: "failed",
        checkpointVersion: 0,
        durationMs,
        traceId: null,
      };
      return;
    }
    const prepared = outcome.value;
    if (prepared.kind === "replay") {
      for (const event of prepared.events)
        yield event.type === "turn_start" ? { ...event, delivery: "replay" } : event;
      return;
    }
    this.services.analytics.capture("turn_created");
    yield* prepared.live.follow(signal);
  }

  private async prepare(
    owner: string,
    sessionId: string,
    key: string,
    input: TurnInput,
    timedOut: AbortSignal,
    line: SandboxLine,
  ): Promise<Prepared> {
    const s = this.services;
    if (!s.store.session(owner, sessionId))
      throw new PreparationError("Session not found", "session_not_found");
    const print = fingerprint(input);
    const existing = s.store.runByKey(owner, sessionId, key);
    if (existing) {
      if (existing.fingerprint !== print)
        throw new PreparationError("Idempotency key input mismatch", "idempotency_key_mismatch");
      const live = s.live.get(existing.id);
      if (live) return { kind: "live", live };
      if (existing.status === "running")
        throw new PreparationError("A Turn is already running", "turn_already_running");
      return { kind: "replay", events: replayable(s.store.events(existing.id), existing) };
    }
    if (!s.settings.runtime.live_enabled) throw new PreparationError("Turn is unavailable", "live_disabled");
    const pool = s.pool;
    if (!pool) throw new PreparationError("Turn is unavailable", "sandbox_unavailable");
    if (pool.isolation === "none" && s.ctx.config.mode.kind === "protected") {
      // Protected mode never runs code without the jail (DESIGN.md, "Sandbox isolation").
      throw new PreparationError("Turn is unavailable", "sandbox_isolation_unavailable");
    }
    const selected = this.resolveSelections(input.skill_selections);
    const attachments = input.attachment_ids.map((id) => {
      const row = s.assets.attachment(owner, id);
      if (!row) throw new PreparationError("Invalid request", "attachment_not_found");
      return row;
    });
    let model: ReturnType<typeof s.models.resolve>;
    try {
      model = s.turnModel();
    } catch (error) {
      if (error instanceof UnknownModelError)
        throw new PreparationError("Turn is unavailable", "model_unavailable");
      throw error;
    }
    const runId = newId("run");
    const claimed = s.store.claimRun({
      id: runId,
      owner_id: owner,
      session_id: sessionId,
      idempotency_key: key,
      fingerprint: print,
      input_json: JSON.stringify(input),
    });
    if (!claimed) {
      const again = s.store.runByKey(owner, sessionId, key);
      if (again && again.fingerprint !== print)
        throw new PreparationError("Idempotency key input mismatch", "idempotency_key_mismatch");
      throw new PreparationError("A Turn is already running", "turn_already_running");
    }
    const run = { id: runId, owner_id: owner, session_id: sessionId };
    const live = new LiveRun(runId, owner, sessionId);
    const traceId = s.tracer.newTrace();
    if (traceId) s.store.setTraceId(runId, traceId);
    const emit = emitterFor(s, { run, live, traceId });
    const offline = model.provider === "offline";
    const usage = new UsageMeter(s.settings.rlm.max_llm_calls);
    const memories: { category: string; text: string }[] = [];
    const single =
      attachments.length === 1 && attachments[0] && TEXT_MEDIA.test(attachments[0].media_type)
        ? attachments[0]
        : undefined;
    const context = single ? new TextDecoder().decode(s.assets.attachmentBytes(single)) : undefined;
    const loadable = selected ?? [...SKILLS];
    const { rlm, runtime } = s.settings;
    const toolsInput = {
      models: s.models,
      model,
      usage,
      signal: live.controller.signal,
      emit,
      modelCallTimeoutMs: rlm.model_call_timeout_seconds * 1000,
      maxToolCalls: rlm.max_tool_calls,
      root: {
        runId,
        owner,
        files: s.files(owner),
        assets: s.assets,
        maxArtifactBytes: s.settings.storage.max_artifact_bytes,
        checkQuota: (bytes: number) => s.quota.check(owner, bytes),
        loadable,
        memoryCategories: s.settings.rlm.autonomous_memory_categories,
        memories,
        runChildren: s.settings.rlm.recursion_enabled
          ? childRunner({
              pool,
              models: s.models,
              model,
              rlm: s.settings.rlm,
              parentRunId: runId,
              usage,
              signal: live.controller.signal,
              emit,
            })
          : undefined,
      },
    };
    const tools = toolNames(toolsInput);
    const opening = Repl.open(
      pool,
      {
        tools,
        vars: context === undefined ? {} : { context },
        outputLimit: rlm.max_output_chars,
        stepTimeoutMs: rlm.step_timeout_seconds * 1000,
        untimedTools: UNTIMED_TOOLS,
      },
      hostToolHandler(toolsInput),
      {
        onQueue: line.report,
        onStarting: line.reportStarting,
        queueTimeoutMs: runtime.sandbox_queue_timeout_seconds * 1000,
      },
    );
    const aborted = new Promise<"timeout">((resolve) => {
      if (timedOut.aborted) resolve("timeout");
      timedOut.addEventListener("abort", () => resolve("timeout"), { once: true });
    });
    const repl = await Promise.race([opening, aborted]).catch((error: unknown) => error as Error);
    if (repl === "timeout" || repl instanceof Error) {
      void opening.then(
        (r) => r.close(),
        () => {},
      );
      const failure = openingFailure(repl, s.ctx.shutdown.aborted || timedOut.reason === "shutdown");
      s.store.tx(() => {
        s.store.commit(runId, {
          status: "failed",
          parts: [
            {
              type: "data-status",
              data: { phase: "preparation", status: "failed", message: failure.message },
            },
          ],
          usage: usage.snapshot(),
          errorCode: failure.code,
          errorMessage: failure.message,
          durationMs: 0,
        });
        emit({ type: "turn_error", message: failure.message, code: failure.code, durationMs: 0 });
      });
      throw failure;
    }
    const bound = attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      mediaType: a.media_type,
      byteSize: a.byte_size,
      bound: a === single,
    }));
    const preloaded = selected ?? [];
    const openingEvents: TurnEvent[] = [
      ...attachments.map(
        (a): TurnEvent => ({
          type: "attachment",
          attachmentId: a.id,
          phase: a === single ? "bound" : "listed",
          filename: a.filename,
          byteSize: a.byte_size,
        }),
      ),
      ...preloaded.map(
        (k): TurnEvent => ({
          type: "skill",
          skillId: k.id,
          name: k.name,
          phase: "preloaded",
          version: k.version,
          trust: k.trust,
          affordances: k.affordances,
        }),
      ),
    ];
    s.live.add(live);
    void executeTurn(
      s,
      {
        run,
        live,
        model,
        offline,
        text: input.text,
        system: systemPrompt({
          tools,
          skills: loadable,
          preloaded,
          attachments: bound,
          maxIters: s.settings.rlm.max_iters,
        }),
        prompt: input.text,
        repl,
        usage,
        traceId,
        opening: openingEvents,
        memories,
        startedAt: Date.now(),
      },
      emit,
    ).catch((error: unknown) => s.log.error("turn execution crashed", { runId, error }));
    return { kind: "live", live };
  }

  /** Explicit selections: every id known and at the expected version, else "Invalid Skill selection". */
  private resolveSelections(selections: TurnInput["skill_selections"]): Skill[] | undefined {
    if (selections.length === 0) return undefined;
    return selections.map(({ id, expected_version }) => {
      const skill = skillById(id);
      if (!skill || skill.version !== expected_version)
        throw new PreparationError("Invalid Skill selection", "invalid_skill_selection");
      return skill;
    });
  }
}
