/**
 * The turns family's stream (docs/streams.md): each spec event a turn's SSE stream carries (`event:
 * <type>` + `data: {type, ...camelCase}`), their union, and the AI SDK chunk union of the compat-only
 * form. The records of committed turns, which reuse some of these payloads, are in turns.ts.
 */
import type { TProperties } from "@sinclair/typebox";
import { type Static, t } from "elysia";
import { Integer } from "./common.ts";

const Str = t.String();
const Int = Integer();
const event = <T extends string, P extends TProperties>(type: T, properties: P, description?: string) =>
  t.Object({ type: t.Literal(type), ...properties }, description ? { description } : {});

export const TurnUsage = t.Object({
  inputTokens: Int,
  outputTokens: Int,
  totalTokens: Int,
  llmCalls: Int,
});

export const TurnStatusEvent = event(
  "turn_status",
  { phase: Str, status: Str, message: t.Union([Str, t.Null()]) },
  "where a turn is before it starts (queued, preparing)",
);
export const TurnStartEvent = event("turn_start", {
  runId: Str,
  sessionId: Str,
  delivery: t.Union([t.Literal("live"), t.Literal("replay")]),
  traceId: t.Optional(Str),
});
export const StepStartEvent = event("step_start", { step: Int });
export const StepFinishEvent = event("step_finish", { step: Int, durationMs: Int });
export const ReasoningEvent = event("reasoning", {
  streamId: Str,
  step: Int,
  text: Str,
  delta: Str,
  final: t.Boolean(),
});
export const CodeEvent = event("code", {
  streamId: Str,
  step: Int,
  code: Str,
  isDelta: t.Boolean(),
  final: t.Boolean(),
});
export const OutputEvent = event("output", {
  streamId: Str,
  step: Int,
  output: Str,
  isDelta: t.Boolean(),
  final: t.Boolean(),
});
export const TextEvent = event("text", {
  streamId: Str,
  delta: Str,
  text: Str,
  final: t.Boolean(),
  role: t.Literal("assistant"),
});
export const ToolCallEvent = event("tool_call", { toolCallId: Str, toolName: Str, input: t.Unknown() });
export const ToolResultEvent = event("tool_result", {
  toolCallId: Str,
  toolName: Str,
  output: t.Unknown(),
  error: t.Union([Str, t.Null()]),
});
export const SkillEvent = event("skill", {
  skillId: Str,
  name: Str,
  phase: t.Union([t.Literal("preloaded"), t.Literal("loaded")]),
  version: Str,
  trust: t.Literal("system"),
  affordances: t.Array(Str),
});
export const ChildProgressEvent = event("child_progress", {
  childId: Str,
  taskLabel: Str,
  state: t.Union([
    t.Literal("not_started"),
    t.Literal("running"),
    t.Literal("completed"),
    t.Literal("failed"),
    t.Literal("cancelled"),
    t.Literal("timed_out"),
  ]),
  elapsedMs: Int,
  outcome: t.Union([Str, t.Null()]),
  evidence: t.Array(Str),
  gaps: t.Array(Str),
  resultFileCount: Int,
  codeExcerpt: t.Union([Str, t.Null()]),
  outputExcerpt: t.Union([Str, t.Null()]),
  cleanupState: t.Union([t.Literal("pending"), t.Literal("done")]),
  parentRunId: Str,
});
export const AttachmentEvent = event("attachment", {
  attachmentId: Str,
  phase: t.Union([t.Literal("bound"), t.Literal("listed")]),
  filename: Str,
  byteSize: Int,
});
export const ArtifactEvent = event("artifact", {
  artifactId: Str,
  artifactKind: Str,
  title: Str,
  mediaType: Str,
  byteSize: Int,
  checksumSha256: Str,
});
export const StructuredResultEvent = event("structured_result", {
  schemaId: Str,
  schemaVersion: Str,
  value: t.Record(t.String(), t.Unknown()),
});
export const UsageEvent = event("usage", { iterations: Int, durationMs: Int, usage: TurnUsage });
export const WarningEvent = event("warning", { message: Str, code: Str });
export const TurnFinishEvent = event("turn_finish", {
  finishReason: t.Union([t.Literal("stop"), t.Literal("length"), t.Literal("error")]),
  status: t.Union([t.Literal("completed"), t.Literal("failed")]),
  checkpointVersion: Int,
  durationMs: Int,
  traceId: t.Union([Str, t.Null()]),
});
export const TurnErrorEvent = event("turn_error", {
  message: Str,
  code: Str,
  durationMs: Int,
  /** What happened, in a sentence a person understands, when more is known than `message`. */
  detail: t.Optional(Str),
});
export const TurnCancelledEvent = event("turn_cancelled", { reason: Str, durationMs: Int });

/** The AI SDK's UIMessageChunk union as the stream uses it (the compat-only form's every frame). */
export const UIMessageChunk = t.Union(
  [
    t.Object({
      type: t.Literal("start"),
      messageId: t.Optional(t.String()),
      messageMetadata: t.Optional(t.Unknown()),
    }),
    t.Object({ type: t.Literal("start-step") }),
    t.Object({ type: t.Literal("finish-step") }),
    t.Object({ type: t.Union([t.Literal("text-start"), t.Literal("text-end")]), id: t.String() }),
    t.Object({ type: t.Literal("text-delta"), id: t.String(), delta: t.String() }),
    t.Object({ type: t.Union([t.Literal("reasoning-start"), t.Literal("reasoning-end")]), id: t.String() }),
    t.Object({ type: t.Literal("reasoning-delta"), id: t.String(), delta: t.String() }),
    t.Object({
      type: t.Literal("tool-input-available"),
      toolCallId: t.String(),
      toolName: t.String(),
      input: t.Unknown(),
    }),
    t.Object({ type: t.Literal("tool-output-available"), toolCallId: t.String(), output: t.Unknown() }),
    t.Object({ type: t.Literal("tool-output-error"), toolCallId: t.String(), errorText: t.String() }),
    t.Object({ type: t.Literal("error"), errorText: t.String() }),
    t.Object({ type: t.Literal("abort"), reason: t.Optional(t.String()) }),
    t.Object({
      type: t.Literal("finish"),
      finishReason: t.Optional(t.String()),
      messageMetadata: t.Optional(t.Unknown()),
    }),
    t.Object({
      type: t.String({
        pattern: "^data-",
        description: "data-status, data-usage, data-code, data-output, ...",
      }),
      id: t.Optional(t.String()),
      data: t.Unknown(),
      transient: t.Optional(t.Boolean()),
    }),
  ],
  { $id: "UIMessageChunk", description: "AI SDK UI message stream chunk" },
);

/** One spec event of the default stream form, told apart by `type` (fields per docs/turns.md). */
export const TurnStreamEvent = t.Union(
  [
    TurnStatusEvent,
    TurnStartEvent,
    StepStartEvent,
    StepFinishEvent,
    ReasoningEvent,
    CodeEvent,
    OutputEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    SkillEvent,
    ChildProgressEvent,
    AttachmentEvent,
    ArtifactEvent,
    StructuredResultEvent,
    UsageEvent,
    WarningEvent,
    TurnFinishEvent,
    TurnErrorEvent,
    TurnCancelledEvent,
  ],
  { description: "one turn stream event" },
);

// --- the types clients and the server speak (derived, so they cannot drift from the schemas) -----------

export type TurnStreamEvent = Static<typeof TurnStreamEvent>;
export type TurnUsage = Static<typeof TurnUsage>;
export type UIMessageChunk = Static<typeof UIMessageChunk>;
