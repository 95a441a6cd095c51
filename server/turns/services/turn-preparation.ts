/**
 * Preparing a turn, in the order of docs/turns.md "A turn's stream", one named step each: the session
 * and the Idempotency-Key (a known key replays or follows its run), whether a sandbox may run code here,
 * the turn's skills, attachments and model, claiming the session for the run, acquiring the sandbox (its
 * interpreter open with the host tools: turn-sandbox.ts), and starting the run in the background
 * (turn-execution.ts). Each step takes only what it uses; a failure is a TurnPreparationError with the
 * message and code the stream ends with. turn-start.ts streams what this prepares.
 */
import { createHash } from "node:crypto";
import type { Api, Model } from "@mariozechner/pi-ai";
import type { PolicySettings } from "../../config/policy-schema.ts";
import { newId } from "../../lib/ids.ts";
import { UnknownModelError } from "../../models/service.ts";
import type { InterpreterPool } from "../../sandbox/interpreter-pool.ts";
import { expandStored } from "../runtime/event-budget.ts";
import { TERMINAL_TYPES, type TurnEvent } from "../runtime/events.ts";
import { LiveRun, type LiveRuns } from "../runtime/live-run.ts";
import { systemPrompt } from "../runtime/prompt.ts";
import type { TurnSandbox } from "../runtime/sandbox.ts";
import type { TurnTracer } from "../runtime/tracing.ts";
import { type Skill, skillById } from "../skills/catalog.ts";
import type { TurnAssetStore } from "../stores/assets.ts";
import type { RunRow, TurnRunStore } from "../stores/runs.ts";
import type { TurnSessionStore } from "../stores/sessions.ts";
import {
  loadableSkills,
  type Prepared,
  type ResolvedTurn,
  type SandboxLine,
  type TurnClaim,
  type TurnInput,
  TurnPreparationError,
  type TurnSubmission,
} from "./prepared-turn.ts";
import type { ClaimedTurn, executeTurn, TurnExecutionDeps } from "./turn-execution.ts";
import type { TurnInstances } from "./turn-instances.ts";
import { type TurnModelDeps, turnModel } from "./turn-model.ts";
import { type TurnRecorder, type TurnRecorderDeps, turnRecorder } from "./turn-recorder.ts";
import type { OpenedSandbox, TurnSandboxDeps } from "./turn-sandbox.ts";

/** Everything preparing and starting a turn uses: the union of its steps' dependencies. */
export type TurnPreparationDeps = KnownTurnDeps &
  AvailabilityDeps &
  ResolveDeps &
  ClaimDeps &
  TurnRecorderDeps &
  TurnSandboxDeps &
  TurnExecutionDeps & { live: LiveRuns };

/**
 * The run's sandbox (the REPL and its host tools) and its execution (the RLM loop, memories, parts): about
 * 15 modules that load with the first new turn, not at the server's start (docs/benchmarks.md, "Cold start").
 */
function runModules() {
  return Promise.all([import("./turn-sandbox.ts"), import("./turn-execution.ts")]);
}

/**
 * Prepares the submission: a replay of its committed run, the live run it already has, or a new run
 * started in the background. `timedOut` aborts at the preparation deadline (or shutdown); `line` hears
 * the turn's place in the sandbox line.
 */
export async function prepareTurn(
  deps: TurnPreparationDeps,
  submission: TurnSubmission,
  timedOut: AbortSignal,
  line: SandboxLine,
): Promise<Prepared> {
  const print = fingerprint(submission.input);
  const known = await knownTurn(deps, submission, print);
  if (known) return known;
  const pool = availablePool(deps);
  const [{ turnSandbox }, { executeTurn: execute }] = await runModules();
  const resolved = await resolveTurn(deps, submission);
  const claim = await claimTurn(deps, submission, print);
  const recorder = turnRecorder(deps, claim);
  let opened: OpenedSandbox;
  try {
    opened = await turnSandbox(deps, {
      pool,
      owner: submission.owner,
      resolved,
      claim,
      recorder,
      line,
      timedOut,
    });
  } catch (error) {
    // The run committed its failure (turn-sandbox.ts): nothing here holds it any more.
    await deps.instances.release(claim.run.id);
    throw error;
  }
  return {
    kind: "live",
    live: startRun(deps, { claim, resolved, opened, text: submission.input.text }, recorder, execute),
  };
}

interface KnownTurnDeps {
  sessions: Pick<TurnSessionStore, "get">;
  runs: Pick<TurnRunStore, "byKey" | "events">;
  live: Pick<LiveRuns, "get">;
  instances: Pick<TurnInstances, "elsewhere" | "remote">;
}

/** Step 1: the session must be the owner's; a known key replays its run or follows it while it runs. */
async function knownTurn(
  { sessions, runs, live, instances }: KnownTurnDeps,
  { owner, sessionId, key }: TurnSubmission,
  print: string,
): Promise<Prepared | undefined> {
  if (!(await sessions.get(owner, sessionId)))
    throw new TurnPreparationError("Session not found", "session_not_found");
  const existing = await runs.byKey(owner, sessionId, key);
  if (!existing) return undefined;
  if (existing.fingerprint !== print)
    throw new TurnPreparationError("Idempotency key input mismatch", "idempotency_key_mismatch");
  const running = live.get(existing.id);
  if (running) return { kind: "live", live: running };
  // Executing on another instance: its log, then the rest as that instance commits it.
  if (existing.status === "running" && (await instances.elsewhere(existing.id)))
    return { kind: "live", live: instances.remote(existing.id) };
  if (existing.status === "running")
    throw new TurnPreparationError("A Turn is already running", "turn_already_running");
  return { kind: "replay", events: replayable(await runs.events(existing.id), existing) };
}

/**
 * SHA-256 of the canonical JSON of the input: what an Idempotency-Key is bound to. A named root model
 * is part of it (the same key under another model is another turn); a request naming none hashes as
 * before the field existed, so runs recorded earlier still replay.
 */
function fingerprint(input: TurnInput): string {
  const canonical = JSON.stringify({
    attachment_ids: input.attachment_ids,
    ...(input.model === undefined ? {} : { model: input.model }),
    skill_selections: input.skill_selections.map((s) => ({ expected_version: s.expected_version, id: s.id })),
    text: input.text,
  });
  return createHash("sha256").update(canonical).digest("hex");
}

/**
 * A committed run replayed for a repeated Idempotency-Key: its stored events, always closed by the
 * terminal shape of docs/turns.md, also for a run that failed in preparation (turn_error, then
 * turn_finish) or was cut by a crash (no terminal event was stored).
 */
function replayable(stored: TurnEvent[], run: RunRow): TurnEvent[] {
  const out = expandStored(stored);
  const last = out.at(-1);
  if (!last || !TERMINAL_TYPES.has(last.type)) {
    out.push({
      type: "turn_error",
      message: run.error_message ?? "The turn did not finish",
      code: run.error_code ?? "execution_failed",
      durationMs: run.duration_ms ?? 0,
    });
  }
  if (out[0]?.type !== "turn_start") {
    out.push({
      type: "turn_finish",
      finishReason: "error",
      status: "failed",
      checkpointVersion: 0,
      durationMs: run.duration_ms ?? 0,
      traceId: null,
    });
  }
  return out;
}

interface AvailabilityDeps {
  settings: Pick<PolicySettings, "runtime">;
  sandbox: Pick<TurnSandbox, "pool">;
  /** Protected mode never runs code without the jail (docs/design.md §11). */
  protectedMode: boolean;
}

/** Step 2: live turns are on and a sandbox may run code here. */
function availablePool({ settings, sandbox, protectedMode }: AvailabilityDeps): InterpreterPool {
  if (!settings.runtime.live_enabled) throw new TurnPreparationError("Turn is unavailable", "live_disabled");
  const { pool } = sandbox;
  if (!pool) throw new TurnPreparationError("Turn is unavailable", "sandbox_unavailable");
  if (pool.isolation === "none" && protectedMode)
    throw new TurnPreparationError("Turn is unavailable", "sandbox_isolation_unavailable");
  return pool;
}

const TEXT_MEDIA = /^(text\/|application\/(json|xml|x-ndjson|csv|yaml|x-yaml|toml)\b)/;

interface ResolveDeps {
  assets: Pick<TurnAssetStore, "attachment" | "attachmentBytes">;
  models: TurnModelDeps["models"];
  /** Read per turn: the policy's model. */
  settings: Pick<PolicySettings, "model">;
  /** The policy's OpenAI-compatible endpoint, if any (turn-model.ts). */
  endpoint: TurnModelDeps["endpoint"];
}

/** Step 3: the selected skills at their expected versions, the owner's attachments, the turn model. */
async function resolveTurn(deps: ResolveDeps, { owner, input }: TurnSubmission): Promise<ResolvedTurn> {
  const { assets, models, settings, endpoint } = deps;
  const selected = selectedSkills(input.skill_selections);
  const attachments = [];
  for (const id of input.attachment_ids) {
    const row = await assets.attachment(owner, id);
    if (!row) throw new TurnPreparationError("Invalid request", "attachment_not_found");
    attachments.push(row);
  }
  let model: Model<Api>;
  try {
    model =
      input.model === undefined
        ? await turnModel({ models, model: settings.model, endpoint })
        : await models.resolve(input.model);
  } catch (error) {
    if (error instanceof UnknownModelError)
      throw new TurnPreparationError("Turn is unavailable", "model_unavailable");
    throw error;
  }
  const [first] = attachments;
  const bound = attachments.length === 1 && first && TEXT_MEDIA.test(first.media_type) ? first : undefined;
  const context = bound ? new TextDecoder().decode(assets.attachmentBytes(bound)) : undefined;
  return { selected, attachments, bound, context, model };
}

/** Explicit selections: every id known and at the expected version, else "Invalid Skill selection". */
function selectedSkills(selections: TurnInput["skill_selections"]): Skill[] | undefined {
  if (selections.length === 0) return undefined;
  return selections.map(({ id, expected_version }) => {
    const skill = skillById(id);
    if (!skill || skill.version !== expected_version)
      throw new TurnPreparationError("Invalid Skill selection", "invalid_skill_selection");
    return skill;
  });
}

interface ClaimDeps {
  runs: Pick<TurnRunStore, "claim" | "byKey" | "setTraceId">;
  tracer: Pick<TurnTracer, "newTrace">;
  instances: Pick<TurnInstances, "hold" | "release">;
}

/** Step 4: claims the session for a new run (one running run per session), traced when sampled. */
async function claimTurn(
  { runs, tracer, instances }: ClaimDeps,
  submission: TurnSubmission,
  print: string,
): Promise<TurnClaim> {
  const { owner, sessionId, key, input } = submission;
  const runId = newId("run");
  // The lease first: an instance starting meanwhile must not take the new running run for a crashed one's.
  await instances.hold(runId);
  const claimed = await runs.claim({
    id: runId,
    owner_id: owner,
    session_id: sessionId,
    idempotency_key: key,
    fingerprint: print,
    input_json: JSON.stringify(input),
    model: input.model ?? null,
  });
  if (!claimed) {
    await instances.release(runId);
    const again = await runs.byKey(owner, sessionId, key);
    if (again && again.fingerprint !== print)
      throw new TurnPreparationError("Idempotency key input mismatch", "idempotency_key_mismatch");
    throw new TurnPreparationError("A Turn is already running", "turn_already_running");
  }
  const traceId = tracer.newTrace();
  if (traceId) await runs.setTraceId(runId, traceId);
  return {
    run: { id: runId, owner_id: owner, session_id: sessionId },
    live: new LiveRun(runId, owner, sessionId),
    traceId,
  };
}

/** Step 6: the run joins the live runs and executes in the background; readers follow its LiveRun. */
function startRun(
  deps: TurnExecutionDeps & { live: Pick<LiveRuns, "add"> },
  turn: { claim: TurnClaim; resolved: ResolvedTurn; opened: OpenedSandbox; text: string },
  recorder: TurnRecorder,
  execute: typeof executeTurn,
): LiveRun {
  const { claim, resolved, opened } = turn;
  const preloaded = resolved.selected ?? [];
  const system = systemPrompt({
    tools: opened.tools,
    skills: loadableSkills(resolved),
    preloaded,
    attachments: resolved.attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      mediaType: a.media_type,
      byteSize: a.byte_size,
      bound: a === resolved.bound,
    })),
    maxIters: deps.settings.rlm.max_iters,
  });
  const opening: TurnEvent[] = [
    ...resolved.attachments.map(
      (a): TurnEvent => ({
        type: "attachment",
        attachmentId: a.id,
        phase: a === resolved.bound ? "bound" : "listed",
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
  deps.live.add(claim.live);
  const claimed: ClaimedTurn = {
    ...claim,
    model: resolved.model,
    offline: resolved.model.provider === "offline",
    text: turn.text,
    system,
    repl: opened.repl,
    usage: opened.usage,
    opening,
    memories: opened.memories,
    startedAt: Date.now(),
  };
  void execute(deps, claimed, recorder).catch((error: unknown) =>
    deps.log.error("turn execution crashed", { runId: claim.run.id, error }),
  );
  return claim.live;
}
