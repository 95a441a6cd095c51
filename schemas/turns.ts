/**
 * The turns family's schemas (docs/turns.md): sessions, turn requests, history, attachments,
 * artifacts, files, skills, cancellation, settings, and the stream's event union. Schemas only.
 */
import type { TObject, TProperties, TSchema } from "@sinclair/typebox";
import { type Static, t } from "elysia";
import { Paging, SandboxReport } from "./common.ts";

const Id = t.String({ minLength: 1, maxLength: 100 });

export const SessionCreate = t.Object(
  { title: t.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

export const SessionPatch = t.Object(
  { title: t.Optional(t.String({ minLength: 1, maxLength: 200 })), archived: t.Optional(t.Boolean()) },
  { additionalProperties: false, minProperties: 1 },
);

export const Session = t.Object({
  id: t.String(),
  title: t.String(),
  archived: t.Boolean(),
  createdAt: t.String(),
  updatedAt: t.String(),
});

export const SessionList = t.Object({
  items: t.Array(Session),
  total: t.Integer(),
  limit: t.Integer(),
  offset: t.Integer(),
});

export const SessionListQuery = t.Object({ ...Paging.properties, archived: t.Optional(t.Boolean()) });

export const SessionParams = t.Object({ session_id: Id });

/**
 * Unknown keys are refused, not dropped: Elysia's normalizer strips keys an `additionalProperties: false`
 * object does not name before validating, so the schema forbids them as `Never` instead.
 */
export const SkillSelection = t.Object(
  {
    id: t.String({ minLength: 1, maxLength: 100 }),
    expected_version: t.String({ minLength: 1, maxLength: 50 }),
  },
  { additionalProperties: t.Never() },
);

/**
 * A malformed `skill_selections` answers 422 `invalid_skill_selection`, not `invalid_request` (the turns
 * envelope maps this schema's failures there, server/turns/routes/envelope.ts).
 */
export const TurnRequest = t.Object(
  {
    text: t.String({ maxLength: 100_000, description: "the user message" }),
    attachment_ids: t.Optional(t.Array(Id, { maxItems: 16 })),
    skill_selections: t.Optional(
      t.Array(SkillSelection, {
        maxItems: 4,
        description: "up to four entries, each skill at most once: authoritative for the Turn",
      }),
    ),
    model: t.Optional(
      t.String({
        minLength: 3,
        maxLength: 200,
        pattern: "^[^/\\s]+/\\S+$",
        description:
          "the Turn's root model, `provider/model`: one of the models the server has configured; omitted, the policy's model. Part of the idempotency fingerprint and recorded on the run",
      }),
    ),
  },
  // Swagger UI's "Try it out" sends this: Python the offline model runs, no skills or attachments to name.
  { additionalProperties: false, examples: [{ text: "```python\nprint(sum(range(10)))\n```" }] },
);

export const TurnQuery = t.Object({
  format: t.Optional(
    t.Union([t.Literal("events"), t.Literal("ui-message-stream")], {
      description:
        "events (default): spec events each followed by its compatibility chunks; ui-message-stream: only UIMessageChunk shapes, every other event as a data-<type> part",
    }),
  ),
});

/**
 * Missing (or empty): 400 `idempotency_key_required`; longer than 200 characters: 400
 * `invalid_idempotency_key` (the turns envelope maps this schema's failures to those codes).
 */
export const TurnHeaders = t.Object({
  "idempotency-key": t.String({
    minLength: 1,
    maxLength: 200,
    description: "Idempotency-Key: mandatory; bounds retries to one durable Turn (at most 200 characters)",
    // Prefilled in Swagger UI: a second "Execute" with it replays the committed Turn.
    examples: ["try-it-out-1"],
  }),
});

// --- the stream's spec events (`event: <type>` + `data: {type, ...camelCase}`; docs/streams.md) -----------

const Str = t.String();
const Int = t.Integer();
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

const payload = <E extends TObject>(e: E) => t.Omit(e, ["type"]);
const dataPart = <T extends string, D extends TSchema>(type: T, data: D) =>
  t.Object({ type: t.Literal(type), data });

/**
 * One part of a committed turn's messages (`GET /api/sessions/{id}/turns`), in the AI SDK's UI message
 * shapes: text, reasoning, step starts, the tool calls, and the other events as `data-<type>` parts
 * whose `data` is the event without its `type`.
 */
export const TurnPart = t.Union([
  t.Object({ type: t.Literal("text"), text: Str }),
  t.Object({ type: t.Literal("reasoning"), text: Str }),
  t.Object({ type: t.Literal("step-start") }),
  t.Object({
    type: t.Literal("dynamic-tool"),
    toolName: Str,
    toolCallId: Str,
    state: t.Union([t.Literal("input-available"), t.Literal("output-available"), t.Literal("output-error")]),
    input: t.Unknown(),
    output: t.Optional(t.Unknown()),
    errorText: t.Optional(Str),
  }),
  dataPart("data-code", t.Object({ step: Int, code: Str })),
  dataPart("data-output", t.Object({ step: Int, output: Str })),
  dataPart("data-status", t.Object({ phase: Str, status: Str, message: t.Union([Str, t.Null()]) })),
  dataPart("data-structured_result", payload(StructuredResultEvent)),
  dataPart("data-skill", payload(SkillEvent)),
  dataPart("data-artifact", payload(ArtifactEvent)),
  dataPart("data-attachment", payload(AttachmentEvent)),
  dataPart("data-warning", payload(WarningEvent)),
  dataPart("data-child_progress", payload(ChildProgressEvent)),
]);

export const TurnRecord = t.Object({
  runId: t.String(),
  sessionId: t.String(),
  status: t.Union([t.Literal("completed"), t.Literal("failed"), t.Literal("cancelled")]),
  input: t.Object({
    text: t.String(),
    attachmentIds: t.Array(t.String()),
    skillSelections: t.Array(SkillSelection),
  }),
  messages: t.Array(
    t.Object({ role: t.Union([t.Literal("user"), t.Literal("assistant")]), parts: t.Array(TurnPart) }),
  ),
  usage: t.Union([TurnUsage, t.Null()], { description: "the turn's token use (null when it never ran)" }),
  error: t.Union([t.Null(), t.Object({ code: t.String(), message: t.String() })]),
  durationMs: t.Union([t.Integer(), t.Null()]),
  createdAt: t.String(),
  finishedAt: t.Union([t.String(), t.Null()]),
});

export const TurnHistory = t.Object({ items: t.Array(TurnRecord), limit: t.Integer(), offset: t.Integer() });

export const RunParams = t.Object({ run_id: Id });

export const RunsByKeyQuery = t.Object({
  idempotency_key: t.String({ minLength: 1, maxLength: 200, description: "the turn's Idempotency-Key" }),
});

export const RunsByKey = t.Object({
  items: t.Array(
    t.Object({
      runId: t.String(),
      sessionId: t.String(),
      status: t.Union([
        t.Literal("running"),
        t.Literal("completed"),
        t.Literal("failed"),
        t.Literal("cancelled"),
      ]),
      createdAt: t.String(),
      model: t.Union([t.String(), t.Null()], {
        description: "the root model the request named; null: the policy's",
      }),
    }),
  ),
});

export const Cancellation = t.Object({
  runId: t.String(),
  status: t.Union([
    t.Literal("cancelling"),
    t.Literal("completed"),
    t.Literal("failed"),
    t.Literal("cancelled"),
  ]),
});

export const Attachment = t.Object({
  id: t.String(),
  filename: t.String(),
  mediaType: t.String(),
  byteSize: t.Integer(),
  sha256: t.String(),
  createdAt: t.String(),
});

export const AttachmentUpload = t.Object({
  file: t.File({ description: "the file (multipart field `file`)" }),
});

export const AttachmentParams = t.Object({ attachment_id: Id });

export const Artifact = t.Object({
  id: t.String(),
  runId: t.String(),
  kind: t.String(),
  title: t.String(),
  mediaType: t.String(),
  byteSize: t.Integer(),
  sha256: t.String(),
  createdAt: t.String(),
});

export const ArtifactParams = t.Object({ artifact_id: Id });

const FilePath = t.String({
  minLength: 1,
  maxLength: 1024,
  description: "relative to the workspace files/ root",
});
const Sha = t.String({ pattern: "^[0-9a-f]{64}$", description: "current SHA-256 precondition" });

export const FileEntry = t.Object({
  path: t.String(),
  type: t.Union([t.Literal("file"), t.Literal("directory")]),
  size: t.Integer(),
  modifiedAt: t.String(),
});

export const FileList = t.Object({ items: t.Array(FileEntry), truncated: t.Boolean() });
export const FileListQuery = t.Object({ path: t.Optional(t.String({ maxLength: 1024 })) });
export const FileQuery = t.Object({ path: FilePath });
export const FileStat = t.Object({
  path: t.String(),
  type: t.Union([t.Literal("file"), t.Literal("directory")]),
  size: t.Integer(),
  modifiedAt: t.String(),
  sha256: t.Union([t.String(), t.Null()]),
});
export const FilePageQuery = t.Object({
  path: FilePath,
  offset: t.Optional(t.Integer({ minimum: 0, default: 0, description: "byte offset of the page" })),
});
export const FilePage = t.Object({
  path: t.String(),
  content: t.String(),
  offset: t.Integer(),
  nextOffset: t.Union([t.Integer(), t.Null()]),
  size: t.Integer(),
  sha256: t.String(),
});
export const FilePut = t.Object(
  { path: FilePath, content: t.String(), sha256: t.Optional(Sha), overwrite: t.Optional(t.Boolean()) },
  { additionalProperties: false },
);
export const FileAppend = t.Object(
  { path: FilePath, content: t.String(), sha256: t.Optional(Sha) },
  { additionalProperties: false },
);
export const FilePatch = t.Object(
  { path: FilePath, old: t.String({ minLength: 1 }), new: t.String(), sha256: t.Optional(Sha) },
  { additionalProperties: false },
);
export const FileDeleteQuery = t.Object({ path: FilePath, sha256: t.Optional(Sha) });
export const FileWritten = t.Object({ path: t.String(), size: t.Integer(), sha256: t.String() });
export const FileDeleted = t.Object({ path: t.String(), deleted: t.Literal(true) });

export const VolumeTree = t.Object({ root: t.String(), paths: t.Array(t.String()), truncated: t.Boolean() });

export const SkillCard = t.Object({
  id: t.String(),
  name: t.String(),
  description: t.String(),
  version: t.String(),
  trust: t.Literal("system"),
  resources: t.Array(t.String()),
});
export const SkillList = t.Object({ items: t.Array(SkillCard) });
export const SkillParams = t.Object({ skill_id: Id });

export const SettingsView = t.Object({
  revision: t.String({ description: "send it back with the next PATCH" }),
  profile: t.String(),
  profiles: t.Array(t.String()),
  defaults: t.Record(t.String(), t.Unknown()),
  overrides: t.Record(t.String(), t.Unknown()),
  effective: t.Record(t.String(), t.Unknown()),
  sandbox: SandboxReport,
  appliesAfterRestart: t.Literal(true),
});

const SettingsUpdate = t.Object(
  {
    scope: t.String({ minLength: 1, description: "`defaults` or a profile name" }),
    path: t.String({ minLength: 1, description: "dotted key, e.g. rlm.max_iters" }),
    value: t.Optional(t.Unknown()),
    unset: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
);

export const SettingsPatch = t.Union([
  t.Object(
    {
      revision: t.String(),
      updates: t.Array(SettingsUpdate, { maxItems: 100 }),
      default_profile: t.Optional(t.String()),
    },
    { additionalProperties: false },
  ),
  t.Object(
    {
      revision: t.String(),
      scope: t.String({ minLength: 1 }),
      path: t.String({ minLength: 1 }),
      value: t.Unknown(),
    },
    { additionalProperties: false },
  ),
  t.Object({ revision: t.String(), profile: t.String({ minLength: 1 }) }, { additionalProperties: false }),
]);

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

export type Session = Static<typeof Session>;
export type SessionList = Static<typeof SessionList>;
export type TurnRequest = Static<typeof TurnRequest>;
export type TurnStreamEvent = Static<typeof TurnStreamEvent>;
export type TurnUsage = Static<typeof TurnUsage>;
export type TurnPart = Static<typeof TurnPart>;
export type TurnRecord = Static<typeof TurnRecord>;
export type TurnHistory = Static<typeof TurnHistory>;
export type Cancellation = Static<typeof Cancellation>;
export type Attachment = Static<typeof Attachment>;
export type Artifact = Static<typeof Artifact>;
export type FileEntry = Static<typeof FileEntry>;
export type FileList = Static<typeof FileList>;
export type FilePage = Static<typeof FilePage>;
export type SkillCard = Static<typeof SkillCard>;
export type SkillList = Static<typeof SkillList>;
export type UIMessageChunk = Static<typeof UIMessageChunk>;
