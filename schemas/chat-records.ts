/**
 * The chat family's response records, in the shapes the reference client parses (its protocol
 * package validates every response): UI messages and their parts, model, provider and resource entries,
 * session list entries, settings, and one NDJSON stream event per line. Where the chat contract fixes a
 * field, the contract's field is here too. Optional fields are left out of the JSON, never sent as null: the
 * reference client's client refuses null where a field is optional. Records marked open keep Atrium's extra
 * fields (Elysia drops every key a closed record does not name).
 */
import { type Static, t } from "elysia";
import { Integer } from "./common.ts";

export const Mode = t.Union([t.Literal("agent"), t.Literal("plan"), t.Literal("harness")]);

/** pi's levels plus the reference client's `max`, which Atrium maps to pi's highest (`xhigh`). */
export const ThinkingLevel = t.Union([
  t.Literal("off"),
  t.Literal("minimal"),
  t.Literal("low"),
  t.Literal("medium"),
  t.Literal("high"),
  t.Literal("xhigh"),
  t.Literal("max"),
]);
export type Mode = Static<typeof Mode>;
export type ThinkingLevel = Static<typeof ThinkingLevel>;

// --- UI messages ---------------------------------------------------------------------------------------

export const TextPart = t.Object({ type: t.Literal("text"), text: t.String() });
export const ErrorPart = t.Object({
  type: t.Literal("error"),
  title: t.Optional(t.String()),
  message: t.String(),
});
/** A question the model asked with the questionnaire tool, waiting for `POST /api/chat/question`. */
export const ChatQuestion = t.Object({
  toolCallId: t.String(),
  questionId: t.String(),
  kind: t.Union([t.Literal("single"), t.Literal("multi"), t.Literal("text")]),
  prompt: t.String(),
  options: t.Array(t.Object({ id: t.String(), label: t.String() })),
});
export const ToolPart = t.Object(
  {
    type: t.String({
      pattern: "^tool-",
      description:
        "tool-<Name>: tool-Read, tool-Write, tool-Edit, tool-Bash, tool-Question, tool-Thinking, ...",
    }),
    toolCallId: t.String({ description: "thinking parts: <messageId>-thinking-<i>" }),
    state: t.Union([
      t.Literal("input-streaming"),
      t.Literal("input-available"),
      t.Literal("output-available"),
      t.Literal("output-error"),
    ]),
    input: t.Optional(t.Unknown({ description: "the tool's arguments (thinking: {thought})" })),
    output: t.Optional(t.Unknown({ description: "the tool's result once it finished" })),
    toolName: t.Optional(t.String({ description: "the runtime's own tool name (read, bash, ...)" })),
    isError: t.Optional(t.Boolean()),
    awaitingAnswer: t.Optional(
      t.Boolean({ description: "a questionnaire call waiting for its answer (then `question` is set)" }),
    ),
    question: t.Optional(ChatQuestion),
  },
  { additionalProperties: true, description: "a tool call, its result, or the model's thinking" },
);
export const MessagePart = t.Union([TextPart, ErrorPart, ToolPart]);
export const UiMessage = t.Object(
  {
    id: t.String(),
    role: t.Union([t.Literal("user"), t.Literal("assistant")]),
    parts: t.Array(MessagePart),
    createdAt: t.Optional(t.Number({ description: "epoch milliseconds" })),
  },
  { additionalProperties: true },
);

// --- stream events (documentation of each NDJSON line; the route's body is the stream) -----------------

export const PlanTodo = t.Object({ step: t.Number(), text: t.String(), completed: t.Boolean() });
export const PlanState = t.Object({
  mode: Mode,
  executing: t.Boolean(),
  pendingDecision: t.Boolean(),
  completed: t.Number(),
  total: t.Number(),
  todos: t.Array(PlanTodo),
  message: t.Optional(t.String()),
});
export const Lifecycle = t.Union(
  ["agent_start", "agent_end", "agent_settled", "turn_start", "turn_end", "message_start", "message_end"].map(
    (name) => t.Literal(name),
  ),
);
export const ChatStreamEvent = t.Union([
  t.Object({
    type: t.Literal("start"),
    id: t.String(),
    runId: t.String(),
    sessionFile: t.Optional(t.String()),
    sessionId: t.String(),
    sessionReset: t.Optional(t.Boolean()),
    diagnostics: t.Optional(t.Array(t.String())),
  }),
  t.Object({ type: t.Literal("delta"), text: t.String(), messageId: t.Optional(t.String()) }),
  t.Object({ type: t.Literal("thinking"), text: t.String(), messageId: t.Optional(t.String()) }),
  t.Object({ type: t.Literal("tool"), part: ToolPart, messageId: t.Optional(t.String()) }),
  t.Object({
    type: t.Literal("plan"),
    mode: Mode,
    executing: t.Boolean(),
    completed: t.Number(),
    total: t.Number(),
    message: t.Optional(t.String()),
    state: PlanState,
  }),
  t.Object({
    type: t.Literal("state"),
    state: t.Object({ name: Lifecycle, message: t.Optional(t.String()) }),
  }),
  t.Object({ type: t.Literal("queue"), steering: t.Array(t.String()), followUp: t.Array(t.String()) }),
  t.Object({ type: t.Literal("compaction"), phase: t.Literal("start"), reason: t.String() }),
  t.Object({
    type: t.Literal("compaction"),
    phase: t.Literal("end"),
    reason: t.String(),
    aborted: t.Boolean(),
    willRetry: t.Boolean(),
    errorMessage: t.Optional(t.String()),
  }),
  t.Object({
    type: t.Literal("retry"),
    phase: t.Literal("start"),
    attempt: t.Number(),
    maxAttempts: t.Number(),
    delayMs: t.Number(),
    errorMessage: t.String(),
  }),
  t.Object({
    type: t.Literal("retry"),
    phase: t.Literal("end"),
    success: t.Boolean(),
    attempt: t.Number(),
    finalError: t.Optional(t.String()),
  }),
  t.Object({
    type: t.Literal("done"),
    runId: t.String(),
    message: UiMessage,
    sessionFile: t.Optional(t.String()),
    sessionId: t.String(),
    sessionReset: t.Optional(t.Boolean()),
  }),
  t.Object({ type: t.Literal("error"), message: t.String(), runId: t.Optional(t.String()) }),
]);

// --- sessions ------------------------------------------------------------------------------------------

const SessionFileName = t.String({
  description: "the session file's name, relative to your sessions folder (never a server path)",
});
export const SessionMeta = t.Object(
  {
    sessionFile: t.Optional(SessionFileName),
    sessionId: t.Optional(t.String()),
    // What a session that is open on the server (a live one) adds.
    id: t.Optional(t.String()),
    title: t.Optional(t.String()),
    createdAt: t.Optional(t.String()),
    updatedAt: t.Optional(t.String()),
    model: t.Optional(t.Union([t.String({ description: "provider/model" }), t.Null()])),
    thinkingLevel: t.Optional(t.String()),
    streaming: t.Optional(t.Boolean({ description: "a reply is running now" })),
    plan: t.Optional(PlanState),
    pendingQuestions: t.Optional(t.Array(ChatQuestion, { description: "questions waiting for an answer" })),
  },
  { additionalProperties: true },
);
export const SessionInfo = t.Object({
  path: t.String({
    description:
      "the session file, relative to your sessions folder (as sessionFile; send it back to resume)",
  }),
  id: t.String(),
  cwd: t.String({ description: "the agent's working directory, relative to your folders: workspace" }),
  name: t.Optional(t.String()),
  created: t.String({ format: "date-time" }),
  modified: t.String({ format: "date-time" }),
  messageCount: Integer({ minimum: 0 }),
  firstMessage: t.String(),
  sessionId: t.String(),
  sessionFile: SessionFileName,
  title: t.String(),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
});

// --- catalogs ------------------------------------------------------------------------------------------

export const ModelInfo = t.Object({
  key: t.String({ description: "provider/id, what a chat request's model names" }),
  provider: t.String(),
  id: t.String({ description: "the model's id within its provider" }),
  name: t.String(),
  reasoning: t.Boolean(),
  input: t.Array(t.Union([t.Literal("text"), t.Literal("image")])),
  contextWindow: t.Optional(t.Number()),
  maxTokens: t.Optional(t.Number()),
  available: t.Boolean({ description: "its provider is configured (a key, or a local server's URL)" }),
  thinkingLevels: t.Optional(
    t.Array(ThinkingLevel, {
      description:
        "the levels this model supports, from the model catalog: `off` only when it does not reason; `xhigh` (a request's `max`) only where the model has it",
    }),
  ),
  defaultThinkingLevel: t.Optional(ThinkingLevel),
});
export const ProviderInfo = t.Object({
  id: t.String(),
  name: t.String(),
  envVarName: t.String(),
  configured: t.Boolean(),
  isConfigured: t.Boolean({ description: "the same as configured, under the reference client's name" }),
  authType: t.Optional(t.Literal("apiKey")),
  fields: t.Optional(
    t.Array(
      t.Object({
        name: t.String({ description: "the field's name in `credentials` of POST /api/chat/providers" }),
        label: t.String(),
        envVarName: t.String({ description: "the variable the field stands for" }),
        secret: t.Boolean({ description: "a secret: never shown again once stored" }),
        set: t.Boolean({ description: "whether you stored it (its value is never returned)" }),
      }),
      {
        description:
          "providers that need more than one key (Amazon Bedrock): the fields Settings asks for, and which are set",
      },
    ),
  ),
});
export const ResourceInfo = t.Object(
  {
    name: t.String(),
    description: t.Optional(t.String()),
    path: t.Optional(t.String({ description: "relative to your folders: pi-agent/…, workspace/…" })),
    source: t.Optional(t.String()),
    argumentHint: t.Optional(t.String()),
    activationStatus: t.Optional(
      t.Union([t.Literal("active"), t.Literal("staged"), t.Literal("reload-required")]),
    ),
  },
  { additionalProperties: true },
);

// --- settings ------------------------------------------------------------------------------------------

const Delivery = t.Union([t.Literal("all"), t.Literal("one-at-a-time")]);
const Transport = t.Union([t.Literal("sse"), t.Literal("websocket"), t.Literal("auto")]);
/** A package: a source string, or pi's object form (a source and the resources it may load). */
const PackageSource = t.Union([t.String(), t.Object({ source: t.String() }, { additionalProperties: true })]);
export const EffectiveSettings = t.Object({
  compaction: t.Object({ enabled: t.Boolean(), reserveTokens: Integer(), keepRecentTokens: Integer() }),
  retry: t.Object({ enabled: t.Boolean(), maxRetries: Integer(), baseDelayMs: Integer() }),
  defaultProvider: t.Optional(t.String()),
  defaultModel: t.Optional(t.String()),
  defaultThinkingLevel: t.Optional(ThinkingLevel),
  enabledModels: t.Optional(t.Array(t.String(), { description: "left out: every model is allowed" })),
  extensions: t.Array(t.String()),
  packages: t.Array(PackageSource),
  prompts: t.Array(t.String()),
  skills: t.Array(t.String()),
  themes: t.Array(t.String()),
  transport: Transport,
  steeringMode: Delivery,
  followUpMode: Delivery,
  enableSkillCommands: t.Boolean(),
});

// --- the types clients and the server speak (derived, so they cannot drift from the schemas) -----------

export type TextPart = Static<typeof TextPart>;
export type ErrorPart = Static<typeof ErrorPart>;
export type ToolPart = Static<typeof ToolPart>;
export type MessagePart = Static<typeof MessagePart>;
export type UiMessage = Static<typeof UiMessage>;
export type ChatQuestion = Static<typeof ChatQuestion>;
export type PlanTodo = Static<typeof PlanTodo>;
export type PlanState = Static<typeof PlanState>;
export type ChatStreamEvent = Static<typeof ChatStreamEvent>;
export type SessionMeta = Static<typeof SessionMeta>;
export type SessionInfo = Static<typeof SessionInfo>;
export type ModelInfo = Static<typeof ModelInfo>;
export type ProviderInfo = Static<typeof ProviderInfo>;
export type ResourceInfo = Static<typeof ResourceInfo>;
export type EffectiveSettings = Static<typeof EffectiveSettings>;
