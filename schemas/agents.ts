/**
 * The agents family's schemas (graph search spec, area B): agents, fleets, memory, chat sessions and
 * history, and the frames of the WebSocket /v1/chat. Schemas only: no runtime code.
 */
import { type Static, t } from "elysia";
import { Integer, PageLimit, Paging } from "./common.ts";

export const CAPABILITIES = [
  "CODE_REVIEW",
  "DOCUMENTATION",
  "TESTING",
  "PLANNING",
  "RESEARCH",
  "CHAT",
  "EXECUTION",
] as const;
export const FLEET_TYPES = ["CODE_DEVELOPMENT", "RESEARCH", "CREATIVE", "SUPPORT", "CUSTOM"] as const;
export const PATTERNS = ["sequential", "parallel", "hierarchical", "dynamic"] as const;
export const MEMORY_TYPES = ["CONTEXT", "PREFERENCES", "INSIGHTS", "HISTORY", "SKILLS"] as const;
export const RECORD_STATUSES = ["active", "inactive", "archived"] as const;
export const SESSION_STATUSES = ["active", "inactive", "ended"] as const;

export type Capability = (typeof CAPABILITIES)[number];
export type Pattern = (typeof PATTERNS)[number];
export type FleetType = (typeof FLEET_TYPES)[number];
export type MemoryType = (typeof MEMORY_TYPES)[number];
export type RecordStatus = (typeof RECORD_STATUSES)[number];

export const Capability = t.Union(
  [
    t.Literal("CODE_REVIEW"),
    t.Literal("DOCUMENTATION"),
    t.Literal("TESTING"),
    t.Literal("PLANNING"),
    t.Literal("RESEARCH"),
    t.Literal("CHAT"),
    t.Literal("EXECUTION"),
  ],
  { description: "what an agent is good at" },
);
export const FleetType = t.Union(
  [
    t.Literal("CODE_DEVELOPMENT"),
    t.Literal("RESEARCH"),
    t.Literal("CREATIVE"),
    t.Literal("SUPPORT"),
    t.Literal("CUSTOM"),
  ],
  { description: "kind of work a fleet does" },
);
export const CoordinationPattern = t.Union(
  [t.Literal("sequential"), t.Literal("parallel"), t.Literal("hierarchical"), t.Literal("dynamic")],
  {
    description:
      "sequential: each agent works on the previous one's output, in order; parallel: all agents at once, then the lead (or first) agent merges; hierarchical: the lead plans and delegates to members, then synthesises; dynamic: each message goes to the agents whose capabilities fit it",
  },
);
export const MemoryType = t.Union(
  [
    t.Literal("CONTEXT"),
    t.Literal("PREFERENCES"),
    t.Literal("INSIGHTS"),
    t.Literal("HISTORY"),
    t.Literal("SKILLS"),
  ],
  { description: "kind of memory entry" },
);
export const RecordStatus = t.Union([t.Literal("active"), t.Literal("inactive"), t.Literal("archived")], {
  description: "only active agents take part in chats; inactive and archived ones are kept but skipped",
});
export const SessionStatus = t.Union([t.Literal("active"), t.Literal("inactive"), t.Literal("ended")], {
  description:
    "inactive: no active agent, or 30 minutes since the last message; ended: closed by end_session",
});

const Id = t.String({ minLength: 1, maxLength: 100 });
const Name = t.String({ minLength: 1, maxLength: 200 });
const Text = (max: number) => t.String({ maxLength: max });
const Temperature = t.Number({
  minimum: 0,
  maximum: 2,
  description: "sampling temperature sent to the model",
});
const ModelId = t.String({
  minLength: 3,
  maxLength: 200,
  description: "provider/model (e.g. openai/gpt-5-mini); omit or null for the server's default model",
});

export const AgentConfig = t.Object(
  {
    temperature: t.Optional(Temperature),
    max_tokens: t.Optional(Integer({ minimum: 1, maximum: 200_000 })),
    memory_limit: t.Optional(
      Integer({
        minimum: 0,
        maximum: 50,
        description: "memory entries put in context per message (default 5)",
      }),
    ),
    mcp_servers: t.Optional(
      t.Array(t.String({ pattern: "^[a-z][a-z0-9_-]{0,31}$" }), {
        maxItems: 16,
        description: "MCP servers (set to allow) whose tools this agent may call",
      }),
    ),
  },
  { additionalProperties: true, description: "model settings; other keys are kept as given" },
);

export const AgentCreate = t.Object(
  {
    name: Name,
    role: t.String({ minLength: 1, maxLength: 200 }),
    description: t.Optional(Text(4000)),
    capabilities: t.Optional(t.Array(Capability, { uniqueItems: true, maxItems: 7 })),
    model: t.Optional(t.Union([ModelId, t.Null()])),
    instructions: t.Optional(Text(20_000)),
    config: t.Optional(AgentConfig),
    status: t.Optional(RecordStatus),
  },
  // Swagger UI's "Try it out" sends this (a made-up `model` would not resolve).
  {
    additionalProperties: false,
    examples: [{ name: "Ada", role: "researcher", capabilities: ["RESEARCH", "CHAT"] }],
  },
);
export const AgentUpdate = t.Partial(AgentCreate, { additionalProperties: false, minProperties: 1 });

export const Agent = t.Object({
  id: t.String(),
  name: t.String(),
  role: t.String(),
  description: t.String(),
  capabilities: t.Array(Capability),
  model: t.Union([t.String(), t.Null()], { description: "as set; null follows the server default" }),
  effective_model: t.String({ description: "the model a message would use now" }),
  instructions: t.String(),
  config: t.Record(t.String(), t.Unknown()),
  status: RecordStatus,
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
});

export const FleetConfig = t.Object(
  {
    max_turns: t.Optional(
      Integer({ minimum: 1, maximum: 50, description: "model calls allowed per message (default 10)" }),
    ),
    temperature: t.Optional(Temperature),
    lead_agent_id: t.Optional(
      t.String({ description: "hierarchical lead / parallel merger; must be a member (default: the first)" }),
    ),
  },
  { additionalProperties: true },
);

export const FleetCreate = t.Object(
  {
    name: Name,
    description: t.Optional(Text(4000)),
    type: FleetType,
    agent_ids: t.Array(Id, { minItems: 1, maxItems: 20, uniqueItems: true, description: "in order" }),
    coordination_pattern: t.Optional(CoordinationPattern),
    config: t.Optional(FleetConfig),
    status: t.Optional(RecordStatus),
  },
  { additionalProperties: false },
);
export const FleetUpdate = t.Partial(FleetCreate, { additionalProperties: false, minProperties: 1 });

export const Fleet = t.Object({
  id: t.String(),
  name: t.String(),
  description: t.String(),
  type: FleetType,
  agent_ids: t.Array(t.String()),
  coordination_pattern: CoordinationPattern,
  config: t.Record(t.String(), t.Unknown()),
  status: RecordStatus,
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
});

const HolderType = t.Union([t.Literal("agent"), t.Literal("fleet")], {
  description: "whose memory: an agent's or a fleet's",
});
const Tags = t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 32, uniqueItems: true });

export const MemoryCreate = t.Object(
  {
    owner_id: Id,
    owner_type: HolderType,
    type: MemoryType,
    content: t.String({ minLength: 1, maxLength: 32_000 }),
    tags: t.Optional(Tags),
    metadata: t.Optional(t.Record(t.String(), t.Unknown())),
    importance: t.Optional(t.Number({ minimum: 0, maximum: 1, description: "0..1 (default 0.5)" })),
  },
  { additionalProperties: false },
);
export const MemoryUpdate = t.Partial(
  t.Object(
    {
      type: MemoryType,
      content: t.String({ minLength: 1, maxLength: 32_000 }),
      tags: Tags,
      metadata: t.Record(t.String(), t.Unknown()),
      importance: t.Number({ minimum: 0, maximum: 1 }),
    },
    { additionalProperties: false },
  ),
  { additionalProperties: false, minProperties: 1 },
);

export const MemoryEntry = t.Object({
  id: t.String(),
  owner_id: t.String(),
  owner_type: HolderType,
  type: MemoryType,
  content: t.String(),
  tags: t.Array(t.String()),
  metadata: t.Record(t.String(), t.Unknown()),
  importance: t.Number(),
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
});
export const MemoryHit = t.Composite([
  MemoryEntry,
  t.Object({ score: t.Union([t.Number(), t.Null()], { description: "BM25 relevance (higher is better)" }) }),
]);

export const MemorySearchQuery = t.Composite([
  Paging,
  t.Object({
    owner_id: t.Optional(Id),
    owner_type: t.Optional(HolderType),
    type: t.Optional(MemoryType),
    tags: t.Optional(
      t.Union([t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 }), t.String()], {
        description: "repeat (?tags=a&tags=b) or comma-separate; every listed tag must be on the entry",
      }),
    ),
    content_query: t.Optional(t.String({ minLength: 1, maxLength: 1000 })),
  }),
]);

export const AgentListQuery = t.Composite([Paging, t.Object({ status: t.Optional(RecordStatus) })]);
export const FleetListQuery = t.Composite([
  Paging,
  t.Object({ type: t.Optional(FleetType), status: t.Optional(RecordStatus) }),
]);
export const ChatSessionListQuery = t.Composite([
  Paging,
  t.Object({
    status: t.Optional(SessionStatus),
    target_id: t.Optional(Id),
    target_type: t.Optional(HolderType),
  }),
]);
export const HistoryQuery = t.Object({
  limit: t.Optional(PageLimit),
  before: t.Optional(t.String({ description: "ISO 8601 timestamp: only messages strictly older" })),
  after: t.Optional(t.String({ description: "ISO 8601 timestamp: only messages strictly newer" })),
  thread_id: t.Optional(Id),
});

export const AgentList = t.Object({ agents: t.Array(Agent), total: Integer(), has_more: t.Boolean() });
export const FleetList = t.Object({ fleets: t.Array(Fleet), total: Integer(), has_more: t.Boolean() });
export const MemorySearchResult = t.Object({
  results: t.Array(MemoryHit),
  total: Integer(),
  has_more: t.Boolean(),
});

export const ChatSession = t.Object({
  session_id: t.String(),
  target_id: t.String(),
  target_type: HolderType,
  status: SessionStatus,
  created_at: t.String({ format: "date-time" }),
  last_message_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  message_count: Integer(),
});
export const ChatSessionList = t.Object({
  sessions: t.Array(ChatSession),
  total: Integer(),
  has_more: t.Boolean(),
});

export const HistoryMessage = t.Object({
  message_id: t.String(),
  type: t.Union([t.Literal("user"), t.Literal("assistant")]),
  content: t.String(),
  timestamp: t.String({ format: "date-time" }),
  sender: t.String({ description: "'user' or the agent id" }),
  receiver: t.String(),
  thread_id: t.Union([t.String(), t.Null()]),
  parent_id: t.Union([t.String(), t.Null()]),
  metadata: t.Record(t.String(), t.Unknown()),
});
export const History = t.Object({ messages: t.Array(HistoryMessage), has_more: t.Boolean() });

export const Deleted = t.Object({ id: t.String(), deleted: t.Literal(true) });

/** Frames a client sends on /v1/chat; the server compiles and enforces them on every frame. */
export const ClientMessageFrame = t.Object({
  type: t.Literal("message"),
  session_id: t.Optional(t.String()),
  content: t.String({
    minLength: 1,
    maxLength: 100_000,
    pattern: "\\S",
    description: "the user's message: not empty, not only whitespace",
  }),
  context: t.Optional(
    t.Object(
      {
        stream: t.Optional(t.Boolean({ description: "false: one response frame instead of stream frames" })),
        thread_id: t.Optional(Id),
        parent_id: t.Optional(Id),
        capabilities: t.Optional(
          t.Array(Capability, { description: "dynamic: route to these capabilities" }),
        ),
      },
      { additionalProperties: true },
    ),
  ),
});
export const ClientEndFrame = t.Object({
  type: t.Literal("end_session"),
  session_id: t.Optional(t.String()),
});

/** `POST /v1/chat/messages` (Atrium extension): one message to an agent or fleet over HTTP. */
export const ChatMessageRequest = t.Object({
  target_id: t.Optional(t.String({ maxLength: 100, description: "the agent or fleet (a new session)" })),
  target_type: t.Optional(t.Union([t.Literal("agent"), t.Literal("fleet")])),
  session_id: t.Optional(t.String({ maxLength: 100, description: "continue this session instead" })),
  content: t.String({ minLength: 1, maxLength: 100_000, pattern: "\\S" }),
  context: t.Optional(
    t.Object({
      thread_id: t.Optional(Id),
      parent_id: t.Optional(Id),
      capabilities: t.Optional(t.Array(Capability, { description: "dynamic: route to these capabilities" })),
    }),
  ),
});

/**
 * Server frames of /v1/chat beyond the contract's (Atrium extensions; a client that knows only `stream`
 * and `response` can ignore them): an agent's MCP tool call and its result, and a notice saying why an
 * MCP server its config lists gave it no tools. All carry the reply's `message_id` and the speaking
 * agent in `metadata` (agent_id, agent_name, phase, step) like its `stream` frames.
 */
export const AgentToolCallFrame = t.Object({
  type: t.Literal("tool_call"),
  message_id: t.String(),
  tool_call_id: t.String(),
  name: t.String({ description: "<server>__<tool>, as the model called it" }),
  arguments: t.Record(t.String(), t.Unknown()),
  metadata: t.Record(t.String(), t.Unknown()),
  timestamp: t.String({ format: "date-time" }),
});
export const AgentToolResultFrame = t.Object({
  type: t.Literal("tool_result"),
  message_id: t.String(),
  tool_call_id: t.String(),
  name: t.String(),
  content: t.String({ description: "what the model was given back (cut at the MCP result limit)" }),
  is_error: t.Boolean(),
  metadata: t.Record(t.String(), t.Unknown()),
  timestamp: t.String({ format: "date-time" }),
});
export const AgentNoticeFrame = t.Object({
  type: t.Literal("notice"),
  message_id: t.String(),
  code: t.Literal("mcp_server_unavailable"),
  message: t.String(),
  metadata: t.Record(t.String(), t.Unknown()),
  timestamp: t.String({ format: "date-time" }),
});

export const ChatMessageReply = t.Object({
  session_id: t.String(),
  message_id: t.String(),
  content: t.String({ description: "the reply: the last agent's, or the merge or synthesis of a fleet" }),
  agents: t.Array(
    t.Object(
      { agent_id: t.String(), agent_name: t.String(), phase: t.String() },
      { additionalProperties: true },
    ),
    { description: "who spoke, in order" },
  ),
  notices: t.Optional(
    t.Array(t.String(), {
      description: "why an MCP server an agent's config lists gave it no tools (an 'ask' server, ...)",
    }),
  ),
  timestamp: t.String(),
});

// --- the types clients and the server speak (derived, so they cannot drift from the schemas) -----------

export type Agent = Static<typeof Agent>;
export type AgentToolCallFrame = Static<typeof AgentToolCallFrame>;
export type AgentToolResultFrame = Static<typeof AgentToolResultFrame>;
export type AgentNoticeFrame = Static<typeof AgentNoticeFrame>;
export type Fleet = Static<typeof Fleet>;
