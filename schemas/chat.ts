/**
 * Schemas of the chat family (chat, events, errors, companion routes; behaviour in docs/chat.md). Request
 * bodies validate; responses validate too, in the shapes the reference client parses (the records
 * are in chat-records.ts), so a client built on that protocol works against Atrium unchanged.
 */
import { type Static, t } from "elysia";
import {
  EffectiveSettings,
  Mode,
  ModelInfo,
  ProviderInfo,
  ResourceInfo,
  SessionInfo,
  SessionMeta,
  ThinkingLevel,
  UiMessage,
} from "./chat-records.ts";
import { Integer, Paging } from "./common.ts";

export * from "./chat-records.ts";

const SessionFile = t.String({
  maxLength: 4096,
  description: "session file name, relative to your sessions folder, as responses give it",
});
const SessionId = t.String({ minLength: 1, maxLength: 200 });

/** The contract's eight providers (server/models/catalog.ts; tests/chat/catalogs.test.ts keeps the two equal). */
export const ProviderId = t.Union(
  [
    t.Literal("amazon-bedrock"),
    t.Literal("openai"),
    t.Literal("anthropic"),
    t.Literal("google-vertex"),
    t.Literal("google"),
    t.Literal("mistral"),
    t.Literal("groq"),
    t.Literal("ollama"),
  ],
  { description: "one of the eight provider ids" },
);

export const ChatRequest = t.Object(
  {
    sessionFile: t.Optional(SessionFile),
    sessionId: t.Optional(SessionId),
    message: t.Optional(
      t.String({ maxLength: 1_000_000, description: "required unless planAction is given" }),
    ),
    model: t.Optional(
      t.Union([
        t.String({ minLength: 1, maxLength: 300, description: "provider/model" }),
        t.Object({
          provider: t.String({ minLength: 1, maxLength: 100 }),
          id: t.String({ minLength: 1, maxLength: 200 }),
          thinkingLevel: t.Optional(ThinkingLevel),
        }),
      ]),
    ),
    mode: t.Optional(Mode),
    planAction: t.Optional(t.Union([t.Literal("execute"), t.Literal("refine")])),
    streamingBehavior: t.Optional(t.Union([t.Literal("steer"), t.Literal("followUp")])),
  },
  // What Swagger UI's "Try it out" sends: a new session's first message (a made-up value per field would
  // name a session or model that does not exist).
  { examples: [{ message: "hello" }] },
);

export const SessionRef = t.Object({
  sessionFile: t.Optional(SessionFile),
  sessionId: t.Optional(SessionId),
});

export const QuestionAnswer = t.Object({
  sessionFile: t.Optional(SessionFile),
  sessionId: t.Optional(SessionId),
  toolCallId: t.String({ minLength: 1, maxLength: 200 }),
  answer: t.Object({
    kind: t.Union([t.Literal("single"), t.Literal("multi"), t.Literal("text"), t.Literal("skip")]),
    questionId: t.Optional(t.String({ maxLength: 200 })),
    selectedIds: t.Optional(t.Array(t.String({ maxLength: 200 }), { maxItems: 100 })),
    text: t.Optional(t.String({ maxLength: 100_000 })),
  }),
});

/** A settings list entry: not blank (the reference client refuses a blank one in the answer). */
const Entry = (maxLength: number) => t.String({ minLength: 1, maxLength, pattern: "\\S" });

export const ChatSettingsUpdate = t.Object(
  {
    compaction: t.Optional(
      t.Object({
        enabled: t.Optional(t.Boolean()),
        reserveTokens: t.Optional(Integer({ minimum: 1 })),
        keepRecentTokens: t.Optional(Integer({ minimum: 1 })),
      }),
    ),
    retry: t.Optional(
      t.Object({
        enabled: t.Optional(t.Boolean()),
        maxRetries: t.Optional(Integer({ minimum: 0, maximum: 20 })),
        baseDelayMs: t.Optional(Integer({ minimum: 0, maximum: 600_000 })),
      }),
    ),
    defaultProvider: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
    defaultModel: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    defaultThinkingLevel: t.Optional(ThinkingLevel),
    enabledModels: t.Optional(
      t.Union([t.Array(Entry(300), { maxItems: 500 }), t.Null()], {
        description: "model patterns; null removes the override (every model allowed)",
      }),
    ),
    extensions: t.Optional(
      t.Array(Entry(4096), {
        maxItems: 200,
        description:
          "local mode only: paths inside your pi agent dir. A refused change is left out and named in diagnostics",
      }),
    ),
    packages: t.Optional(
      t.Array(
        t.Union([
          Entry(4096),
          t.Object(
            {
              source: Entry(4096),
              extensions: t.Optional(t.Array(Entry(4096), { maxItems: 200 })),
              skills: t.Optional(t.Array(Entry(4096), { maxItems: 200 })),
              prompts: t.Optional(t.Array(Entry(4096), { maxItems: 200 })),
              themes: t.Optional(t.Array(Entry(4096), { maxItems: 200 })),
            },
            { additionalProperties: false },
          ),
        ]),
        {
          maxItems: 200,
          description:
            "local mode only: folders inside your pi agent dir; never npm or git. A refused change is left out and named in diagnostics",
        },
      ),
    ),
    prompts: t.Optional(t.Array(Entry(4096), { maxItems: 200 })),
    skills: t.Optional(t.Array(Entry(4096), { maxItems: 200 })),
    themes: t.Optional(t.Array(Entry(4096), { maxItems: 200 })),
    transport: t.Optional(t.Union([t.Literal("sse"), t.Literal("websocket"), t.Literal("auto")])),
    steeringMode: t.Optional(t.Union([t.Literal("all"), t.Literal("one-at-a-time")])),
    followUpMode: t.Optional(t.Union([t.Literal("all"), t.Literal("one-at-a-time")])),
    enableSkillCommands: t.Optional(t.Boolean()),
  },
  {
    additionalProperties: false,
    // Validation drops keys it does not know before checking, so an update left empty named none.
    minProperties: 1,
    error: "no known setting in the update",
    description: "a partial update: at least one known setting",
  },
);

export const SettingsUpdateBody = t.Object({ settings: ChatSettingsUpdate });
/** The owner's own settings as responses show them: the keys an update may set, nothing else. */
const ProjectSettings = t.Object(ChatSettingsUpdate.properties, { additionalProperties: false });

export const ProviderUpdate = t.Object({
  provider: t.Optional(ProviderId),
  providerId: t.Optional(
    t.Union(ProviderId.anyOf, { description: "the same as provider (the reference client's name)" }),
  ),
  apiKey: t.Optional(
    t.Union([t.String({ maxLength: 4096 }), t.Null()], {
      description: "the key to store; empty or null clears it (Amazon Bedrock: use `credentials`)",
    }),
  ),
  credentials: t.Optional(
    t.Object(
      {
        accessKeyId: t.Optional(t.String({ maxLength: 128 })),
        secretAccessKey: t.Optional(t.String({ maxLength: 4096 })),
        region: t.Optional(t.String({ maxLength: 64 })),
      },
      {
        additionalProperties: false,
        description:
          "Amazon Bedrock only: all three fields (access key id, secret access key, region), stored together and never echoed; `apiKey: null` clears them",
      },
    ),
  ),
});
export const ProviderTestParams = t.Object({ id: ProviderId });
export const ProviderTestBody = t.Object({
  apiKey: t.Optional(
    t.String({
      maxLength: 4096,
      description: "a key to test before saving it (Ollama: its URL; local mode only); else the stored one",
    }),
  ),
  baseUrl: t.Optional(
    t.String({
      maxLength: 2048,
      description:
        "local mode only: the API base the model list is fetched from (`https://api.openai.com/v1`), for a proxy or a compatible server",
    }),
  ),
});
export const ProviderTestResult = t.Union([
  t.Object({
    ok: t.Literal(true),
    provider: t.String(),
    detail: t.String({ description: "what answered, in words (the URL and how many models)" }),
    models: Integer(),
  }),
  t.Object({
    ok: t.Literal(false),
    provider: t.String(),
    error: t.String({
      description:
        "what went wrong, in words: unreachable (the URL and why), the key refused with the provider's own message, another status",
    }),
  }),
]);
export const ProviderRemove = t.Object({ providerId: ProviderId });

export const RunBody = t.Object({ runId: t.String({ minLength: 1, maxLength: 200 }) });
export const RunsQuery = t.Object({ sessionId: SessionId, ...Paging.properties });
export const ProvenanceQuery = t.Object({ runId: t.String({ minLength: 1, maxLength: 200 }) });
export const SessionsQuery = Paging;
export const DiscoverQuery = t.Object({ provider: t.Optional(ProviderId) });
export const DiscoverBody = t.Object({ providerId: ProviderId });

// --- responses ------------------------------------------------------------------------------------------

const Open = t.Record(t.String(), t.Unknown());

export const ChatStream = t.String({
  description:
    "NDJSON (application/x-ndjson), one ChatStreamEvent per line: start, delta, thinking, tool, plan, state, queue, compaction, retry, then exactly one done or error",
});
export const AttachStream = t.String({
  description:
    "Server-Sent Events of the session's events (another client's turn, compaction, queue changes); resumable with Last-Event-ID",
});
const SessionFileName = t.String({
  description: "the session file's name, relative to your sessions folder (never a server path)",
});
export const NewSession = t.Object({
  sessionFile: SessionFileName,
  sessionId: t.String(),
  session: t.Object({ sessionFile: SessionFileName, sessionId: t.String() }),
  messages: t.Array(UiMessage, { maxItems: 0 }),
});
export const Hydrated = t.Object({
  session: SessionMeta,
  messages: t.Array(UiMessage),
  sessionReset: t.Boolean(),
});
export const SessionList = t.Object({ sessions: t.Array(SessionInfo) });
export const Aborted = t.Object({ aborted: t.Boolean() });
export const SessionDeleted = t.Object({
  ok: t.Literal(true),
  sessionId: t.String(),
  sessionFile: SessionFileName,
});
export const SessionDeleteMissing = t.Object({
  ok: t.Literal(false),
  reason: t.Literal("session-not-owned-or-missing"),
});
export const AccountErased = t.Object({
  ok: t.Literal(true),
  scope: t.Literal("app-mirror"),
  erasedSessions: Integer(),
  erasedProviders: Integer(),
  message: t.String(),
});
export const QuestionAnswered = t.Object({
  ok: t.Literal(true),
  message: t.String(),
  mode: Mode,
  planAction: t.Optional(t.Union([t.Literal("execute"), t.Literal("refine")])),
});
export const QuestionMissing = t.Object({ ok: t.Literal(false), message: t.String() });
export const Providers = t.Object({ providers: t.Array(ProviderInfo) });
export const ProviderUpdated = t.Object({
  success: t.Literal(true),
  providers: t.Array(ProviderInfo, { description: "every provider again, as GET answers them" }),
  reloadRequired: t.Boolean({ description: "always false: live sessions use the key at once" }),
  ok: t.Literal(true),
  provider: ProviderInfo,
  stored: t.Boolean(),
  envOverrides: t.Boolean({ description: "the environment variable is set and wins over the stored key" }),
});
export const Models = t.Object({
  models: t.Array(ModelInfo),
  selectedModelKey: t.String(),
  defaultProvider: t.String(),
  defaultModel: t.String(),
  defaultThinkingLevel: ThinkingLevel,
  diagnostics: t.Array(t.String()),
});
export const Discovered = t.Object({
  providerId: t.String(),
  provider: t.String(),
  reachable: t.Boolean(),
  models: t.Array(ModelInfo),
  diagnostics: t.Array(t.String()),
});
const CommandEntry = t.Object({
  name: t.String(),
  description: t.String(),
  argumentHint: t.Optional(t.String()),
  source: t.Union([t.Literal("builtin"), t.Literal("skill"), t.Literal("prompt"), t.Literal("extension")]),
  passThrough: t.Optional(t.Boolean()),
});
export const Commands = t.Object({ commands: t.Array(CommandEntry), diagnostics: t.Array(t.String()) });
export const Resources = t.Object({
  packages: t.Array(ResourceInfo),
  skills: t.Array(ResourceInfo),
  prompts: t.Array(ResourceInfo),
  extensions: t.Array(ResourceInfo),
  themes: t.Array(ResourceInfo),
  agentsFiles: t.Array(ResourceInfo),
  diagnostics: t.Array(t.String()),
});
export const SettingsUpdated = t.Object({
  diagnostics: t.Array(t.String()),
  effective: EffectiveSettings,
  project: ProjectSettings,
  projectPath: t.String({
    description: "the settings file, relative to your folders: pi-agent/settings.json",
  }),
  updateImpact: t.Object({ newSessionRecommended: t.Boolean(), resourceReloadRequired: t.Boolean() }),
});
export const Settings = SettingsUpdated;
export const Runs = t.Object({ runs: t.Array(Open) });
export const Provenance = Open;

// --- the types clients and the server speak --------------------------------------------------------------

export type ProviderId = Static<typeof ProviderId>;
export type ChatRequest = Static<typeof ChatRequest>;
export type SessionRef = Static<typeof SessionRef>;
export type QuestionAnswer = Static<typeof QuestionAnswer>;
export type ProviderUpdate = Static<typeof ProviderUpdate>;
export type ProviderTestBody = Static<typeof ProviderTestBody>;
export type ProviderTestResult = Static<typeof ProviderTestResult>;
export type Hydrated = Static<typeof Hydrated>;
export type SessionList = Static<typeof SessionList>;
export type Providers = Static<typeof Providers>;
export type Models = Static<typeof Models>;
export type Discovered = Static<typeof Discovered>;
export type Commands = Static<typeof Commands>;
