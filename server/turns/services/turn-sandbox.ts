/**
 * Step 5 of preparing a turn: acquiring its sandbox. The turn's interpreter is taken from the pool (in
 * line when the pool is at its ceiling) and opened with the host tools this turn offers: model queries,
 * child runs when recursion is on, the owner's files, skills, artifacts, memory proposals. An interpreter
 * that cannot be had in time fails the claimed run durably (committed, with its `turn_error`, the time it
 * really took and a sentence saying why), and the server log says so in one line.
 */
import type { PolicySettings } from "../../config/policy-schema.ts";
import type { Logger } from "../../log.ts";
import type { McpClients } from "../../mcp-client/clients.ts";
import type { ModelService } from "../../models/service.ts";
import { InterpreterQueueTimeout } from "../../sandbox/fair-line.ts";
import { SandboxKilled } from "../../sandbox/interpreter.ts";
import type { InterpreterPool } from "../../sandbox/interpreter-pool.ts";
import { childRunner } from "../runtime/children.ts";
import { type HostToolsInput, hostToolHandler, toolNames, UNTIMED_TOOLS } from "../runtime/host-tools.ts";
import { Repl } from "../runtime/repl.ts";
import { UsageMeter } from "../runtime/usage.ts";
import type { TurnAssetStore } from "../stores/assets.ts";
import type { TurnRunStore } from "../stores/runs.ts";
import type { TurnFileService } from "./files.ts";
import type { Memory } from "./memories.ts";
import {
  loadableSkills,
  type ResolvedTurn,
  type SandboxLine,
  type TurnClaim,
  TurnPreparationError,
} from "./prepared-turn.ts";
import type { TurnRecorder } from "./turn-recorder.ts";

export interface TurnSandboxDeps {
  /** Read per turn: the loop's caps, the queue deadline, the artifact size limit. */
  settings: Pick<PolicySettings, "rlm" | "runtime" | "storage">;
  models: ModelService;
  files: Pick<TurnFileService, "forOwner">;
  assets: Pick<TurnAssetStore, "addArtifactCandidate">;
  quota: { check(owner: string, bytes: number): Promise<void> };
  runs: Pick<TurnRunStore, "commit">;
  shutdown: AbortSignal;
  log: Pick<Logger, "warn">;
  /** MCP servers as tools (mcp_call); absent: none. */
  mcp?: McpClients;
}

/** The turn's open interpreter, the tools it offers, and what its host tools account into. */
export interface OpenedSandbox {
  repl: Repl;
  tools: string[];
  usage: UsageMeter;
  memories: Memory[];
}

export interface SandboxRequest {
  pool: InterpreterPool;
  owner: string;
  resolved: ResolvedTurn;
  claim: TurnClaim;
  /** The turn's events: its `emit`, and `commit` for the failure when no interpreter is had. */
  recorder: TurnRecorder;
  /** Hears the turn's place in the pool's line and that its interpreter is starting. */
  line: SandboxLine;
  /** Aborted at the preparation deadline ("timeout") or when the server stops ("shutdown"). */
  timedOut: AbortSignal;
}

export async function turnSandbox(deps: TurnSandboxDeps, request: SandboxRequest): Promise<OpenedSandbox> {
  const { pool, resolved, claim, line, timedOut } = request;
  const began = Date.now();
  const { rlm, runtime } = deps.settings;
  const usage = new UsageMeter(rlm.max_llm_calls);
  const memories: Memory[] = [];
  const tools = hostTools(deps, request, usage, memories);
  const names = toolNames(tools);
  const opening = Repl.open(
    pool,
    {
      tools: names,
      vars: resolved.context === undefined ? {} : { context: resolved.context },
      outputLimit: rlm.max_output_chars,
      stepTimeoutMs: rlm.step_timeout_seconds * 1000,
      untimedTools: UNTIMED_TOOLS,
    },
    hostToolHandler(tools),
    {
      owner: request.owner,
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
  if (repl !== "timeout" && !(repl instanceof Error)) return { repl, tools: names, usage, memories };
  // Not had in time: an interpreter that arrives later is closed at once.
  void opening.then(
    (r) => r.close(),
    () => {},
  );
  const failure = openingFailure(repl, deps.shutdown.aborted || timedOut.reason === "shutdown");
  const durationMs = Date.now() - began;
  const sentence = failure.detail ?? failure.message;
  deps.log.warn("turn failed: no sandbox", {
    runId: claim.run.id,
    owner: request.owner,
    code: failure.code,
    durationMs,
    detail: sentence,
  });
  await request.recorder.commit(async (tx) => {
    await deps.runs.commit(
      claim.run.id,
      {
        status: "failed",
        parts: [{ type: "data-status", data: { phase: "preparation", status: "failed", message: sentence } }],
        usage: usage.snapshot(),
        errorCode: failure.code,
        // The history shows the sentence; the stream's `message` keeps the contract's words beside it.
        errorMessage: sentence,
        durationMs,
      },
      tx,
    );
    const detail = failure.detail === undefined ? {} : { detail: failure.detail };
    request.recorder.emit({
      type: "turn_error",
      message: failure.message,
      code: failure.code,
      durationMs,
      ...detail,
    });
  });
  throw failure;
}

/** The host tools of a root turn (a child run gets model queries only: runtime/children.ts). */
function hostTools(
  deps: TurnSandboxDeps,
  { pool, owner, resolved, claim, recorder }: SandboxRequest,
  usage: UsageMeter,
  memories: Memory[],
): HostToolsInput {
  const { rlm, storage } = deps.settings;
  const signal = claim.live.controller.signal;
  const runId = claim.run.id;
  const { emit } = recorder;
  return {
    models: deps.models,
    model: resolved.model,
    usage,
    signal,
    emit,
    modelCallTimeoutMs: rlm.model_call_timeout_seconds * 1000,
    maxToolCalls: rlm.max_tool_calls,
    root: {
      runId,
      owner,
      files: deps.files.forOwner(owner),
      assets: deps.assets,
      maxArtifactBytes: storage.max_artifact_bytes,
      checkQuota: (bytes: number) => deps.quota.check(owner, bytes),
      loadable: loadableSkills(resolved),
      memoryCategories: rlm.autonomous_memory_categories,
      memories,
      ...(deps.mcp ? { mcp: deps.mcp } : {}),
      runChildren: rlm.recursion_enabled
        ? childRunner({
            pool,
            models: deps.models,
            model: resolved.model,
            rlm,
            parentRunId: runId,
            usage,
            signal,
            emit,
          })
        : undefined,
    },
  };
}

/**
 * Why the turn's interpreter could not be opened: the contract's message and code, and a sentence a person
 * understands (what the sandbox was doing, what the machine lacked).
 */
function openingFailure(reason: "timeout" | Error, stopping: boolean): TurnPreparationError {
  const failure = (code: string, detail: string, message = "Turn is unavailable") =>
    new TurnPreparationError(message, code, detail);
  if (stopping) return failure("server_stopping", "The server is shutting down; try again once it is back.");
  if (reason === "timeout")
    return failure(
      "preparation_timeout",
      "The turn could not be prepared in time (policy runtime.preparation_timeout_seconds); try again.",
      "Turn preparation timed out",
    );
  if (reason instanceof InterpreterQueueTimeout)
    return failure(
      "sandbox_queue_timeout",
      `Every Python sandbox stayed busy with other turns for ${Math.round(reason.waitedMs / 1000)} s; try again in a moment.`,
    );
  const why = reason instanceof SandboxKilled && reason.detail ? `: ${reason.detail}` : "";
  if (reason instanceof SandboxKilled && reason.reason === "start_timeout")
    return failure(
      "sandbox_start_timeout",
      `The Python sandbox did not start${why || ": it took too long"}.`,
    );
  return failure("sandbox_unavailable", `The Python sandbox did not start${why}.`);
}
