/**
 * The turns family's schemas (docs/turns.md): sessions, turn requests, history, attachments,
 * artifacts, files, skills, cancellation and settings. The stream's events are in turn-stream.ts.
 */
import type { TObject, TSchema } from "@sinclair/typebox";
import { type Static, t } from "elysia";
import { Integer, Paging, SandboxReport } from "./common.ts";
import {
  ArtifactEvent,
  AttachmentEvent,
  ChildProgressEvent,
  SkillEvent,
  StructuredResultEvent,
  TurnUsage,
  WarningEvent,
} from "./turn-stream.ts";

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
  total: Integer(),
  limit: Integer(),
  offset: Integer(),
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

const Str = t.String();
const Int = Integer();
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
  durationMs: t.Union([Integer(), t.Null()]),
  createdAt: t.String(),
  finishedAt: t.Union([t.String(), t.Null()]),
});

export const TurnHistory = t.Object({ items: t.Array(TurnRecord), limit: Integer(), offset: Integer() });

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
  byteSize: Integer(),
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
  byteSize: Integer(),
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
  size: Integer(),
  modifiedAt: t.String(),
});

export const FileList = t.Object({ items: t.Array(FileEntry), truncated: t.Boolean() });
export const FileListQuery = t.Object({ path: t.Optional(t.String({ maxLength: 1024 })) });
export const FileQuery = t.Object({ path: FilePath });
export const FileStat = t.Object({
  path: t.String(),
  type: t.Union([t.Literal("file"), t.Literal("directory")]),
  size: Integer(),
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
  offset: Integer(),
  nextOffset: t.Union([Integer(), t.Null()]),
  size: Integer(),
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
export const FileWritten = t.Object({ path: t.String(), size: Integer(), sha256: t.String() });
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

// --- the types clients and the server speak (derived, so they cannot drift from the schemas) -----------

export type Session = Static<typeof Session>;
export type SessionList = Static<typeof SessionList>;
export type TurnRequest = Static<typeof TurnRequest>;
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
