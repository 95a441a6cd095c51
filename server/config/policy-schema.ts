/**
 * The shape of one resolved policy profile (`[defaults]` merged into `[profiles.<name>]`).
 *
 * Every object is closed: a key not listed here is an unknown key and fails startup. Keys ending in `_env`
 * hold environment variable names, never values.
 */
import { type Static, Type } from "@sinclair/typebox";
import { ENV_NAME } from "./env.ts";

const EnvName = Type.String({ pattern: ENV_NAME.source });
const PositiveInt = Type.Integer({ minimum: 1 });
const Closed = { additionalProperties: false } as const;

export const PolicySettingsSchema = Type.Object(
  {
    runtime: Type.Object(
      {
        heartbeat_seconds: Type.Number({ exclusiveMinimum: 0, maximum: 300 }),
        live_enabled: Type.Boolean(),
        preparation_timeout_seconds: Type.Number({ exclusiveMinimum: 0, maximum: 3600 }),
        /** 0: derived from the machine's cores and memory (see server/sandbox/interpreter-pool.ts). */
        max_interpreters: Type.Integer({ minimum: 0, maximum: 1024 }),
        sandbox_queue_timeout_seconds: Type.Number({ exclusiveMinimum: 0, maximum: 86400 }),
        sandbox_start_timeout_seconds: Type.Number({ exclusiveMinimum: 0, maximum: 3600 }),
        /** Interpreters kept warm while no one is active (APP_SANDBOX_WARM overrides it). */
        warm_interpreters: Type.Integer({ minimum: 0, maximum: 1024 }),
        /** Kept warm in addition for each owner who started a turn within warm_active_owner_seconds. */
        warm_per_active_owner: Type.Integer({ minimum: 0, maximum: 64 }),
        warm_active_owner_seconds: Type.Number({ exclusiveMinimum: 0, maximum: 86400 }),
      },
      Closed,
    ),
    model: Type.Object(
      {
        provider: Type.Union([Type.Literal("interactive"), Type.Literal("gateway")]),
        id: Type.String(),
        api_key_env: EnvName,
        base_url_env: EnvName,
      },
      Closed,
    ),
    sandbox: Type.Object(
      {
        api_key_env: EnvName,
        // Limits on every sandboxed process (turns' Python, the local-mode shell): server/sandbox/limits.ts.
        memory_mb: Type.Integer({ minimum: 256, maximum: 1048576 }),
        // pyodide reserves its WebAssembly memory up front: below 4 GiB it hangs or aborts at start.
        address_space_mb: Type.Integer({ minimum: 4096, maximum: 1048576 }),
        processes: Type.Integer({ minimum: 32, maximum: 65536 }),
        cpu_seconds: PositiveInt,
        file_size_mb: PositiveInt,
        open_files: Type.Integer({ minimum: 64, maximum: 1048576 }),
        scratch_mb: PositiveInt,
        cpu_weight: Type.Integer({ minimum: 1, maximum: 10000 }),
        cpu_cores: Type.Number({ minimum: 0, maximum: 4096 }),
        // The first of the 65536 host uids sandboxes run as when the server is root (server/sandbox/uids.ts).
        uid_base: Type.Integer({ minimum: 65536, maximum: 2147418111 }),
        max_user_sandboxes: Type.Integer({ minimum: 1, maximum: 61440 }),
        network: Type.Union([Type.Literal("none"), Type.Literal("egress")]),
      },
      Closed,
    ),
    database: Type.Object(
      {
        url_env: EnvName,
        required: Type.Boolean(),
        // What startup does with pending migrations: apply them, or refuse to start (`atrium migrate`).
        migrations: Type.Union([Type.Literal("apply"), Type.Literal("require_head")]),
      },
      Closed,
    ),
    storage: Type.Object(
      {
        max_upload_bytes: PositiveInt,
        max_url_bytes: PositiveInt,
        max_artifact_bytes: PositiveInt,
        file_page_bytes: Type.Integer({ minimum: 1024 }),
        workspace_quota_bytes: PositiveInt,
        workspace_max_files: PositiveInt,
      },
      Closed,
    ),
    tracing: Type.Object(
      {
        exporter: Type.Union([Type.Literal("local"), Type.Literal("managed"), Type.Literal("off")]),
        async_logging: Type.Boolean(),
        trace_sampling_ratio: Type.Number({ minimum: 0, maximum: 1 }),
        trace_content_max_chars: PositiveInt,
        expose_trace_id: Type.Boolean(),
        endpoint_env: EnvName,
        token_env: EnvName,
      },
      Closed,
    ),
    rlm: Type.Object(
      {
        max_iters: PositiveInt,
        max_llm_calls: PositiveInt,
        max_code_chars: PositiveInt,
        max_output_chars: PositiveInt,
        step_timeout_seconds: Type.Number({ exclusiveMinimum: 0 }),
        turn_timeout_seconds: Type.Number({ exclusiveMinimum: 0 }),
        model_call_timeout_seconds: Type.Number({ exclusiveMinimum: 0 }),
        max_tool_calls: PositiveInt,
        max_events_per_step: Type.Integer({ minimum: 20 }),
        max_events_per_turn: Type.Integer({ minimum: 50 }),
        max_event_chars: Type.Integer({ minimum: 1024 }),
        max_stored_bytes_per_turn: Type.Integer({ minimum: 65536 }),
        max_answer_chars: Type.Integer({ minimum: 1024 }),
        recursion_enabled: Type.Boolean(),
        recursion_max_calls: PositiveInt,
        recursion_max_prompt_chars: PositiveInt,
        recursion_child_max_iters: PositiveInt,
        recursion_child_max_llm_calls: PositiveInt,
        recursion_child_max_output_chars: PositiveInt,
        recursion_max_parallel_children: PositiveInt,
        recursion_child_timeout_seconds: Type.Number({ exclusiveMinimum: 0 }),
        autonomous_memory_categories: Type.Array(Type.String({ minLength: 1 })),
      },
      Closed,
    ),
    analytics: Type.Object(
      {
        enabled: Type.Boolean(),
        project_token_env: EnvName,
        host: Type.String({ pattern: "^https?://[^\\s/]+" }),
      },
      Closed,
    ),
    /**
     * Search's embeddings (optional: a policy without the table keeps search on BM25) and the limits of
     * reading documents (PDF, HTML) in the parse subprocess (optional: the committed values otherwise).
     */
    search: Type.Optional(
      Type.Object(
        {
          /** The embedding model an OpenAI-compatible `/embeddings` endpoint serves; "" for none. */
          embeddings_model: Type.String(),
          embeddings_base_url_env: EnvName,
          embeddings_api_key_env: EnvName,
          read_timeout_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 3600 })),
          read_memory_mb: Type.Optional(Type.Integer({ minimum: 128, maximum: 65536 })),
          read_max_pages: Type.Optional(PositiveInt),
          read_max_text_mb: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 })),
          read_parallel: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
        },
        Closed,
      ),
    ),
    /** The OpenAI-compatible endpoint (server/openai/): the most tokens one reply may ask for. */
    openai: Type.Optional(Type.Object({ max_completion_tokens: PositiveInt }, Closed)),
    /**
     * MCP servers every user's chat, agents and turns may use (server/mcp-client/, docs/mcp-tools.md):
     * an HTTP server by `url` (the operator names it, so any address) or a stdio server by `command`
     * (run in each user's own sandbox). Secrets are named by variable: `token_env`, `headers_env`.
     */
    mcp: Type.Optional(
      Type.Object(
        {
          servers: Type.Array(
            Type.Object(
              {
                name: Type.String({ pattern: "^[a-z][a-z0-9_-]{0,31}$" }),
                url: Type.Optional(Type.String({ pattern: "^https?://" })),
                command: Type.Optional(Type.String({ minLength: 1 })),
                args: Type.Optional(Type.Array(Type.String())),
                token_env: Type.Optional(EnvName),
                headers_env: Type.Optional(
                  Type.Record(Type.String({ pattern: "^[A-Za-z0-9-]{1,64}$" }), EnvName),
                ),
                approval: Type.Optional(Type.Union([Type.Literal("ask"), Type.Literal("allow")])),
              },
              Closed,
            ),
          ),
        },
        Closed,
      ),
    ),
  },
  Closed,
);

export type PolicySettings = Static<typeof PolicySettingsSchema>;

/** Keys that existed in earlier versions. They fail like any unknown key, with the reason attached. */
export const REMOVED_KEYS: Record<string, string> = {
  "tracing.trace_content_mode":
    "trace content is always readable and bounded by tracing.trace_content_max_chars",
  "rlm.recursion_max_depth": "the child depth is fixed at 1",
};
