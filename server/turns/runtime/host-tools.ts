/**
 * The host tools a turn's Python calls through the sandbox pipe: model queries, child runs, workspace
 * files, skills, artifacts and memory proposals. Each call is validated here (the sandbox is untrusted)
 * and shows in the stream as a tool_call / tool_result pair. Budgets: a turn makes at most
 * `maxToolCalls` calls (past it: one warning, then every call fails in Python and nothing more is
 * recorded); each model query has its own deadline, on top of the turn's signal.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import type { McpClients } from "../../mcp-client/clients.ts";
import { replyFailed, replyText } from "../../models/reply.ts";
import type { ModelService } from "../../models/service.ts";
import { type Skill, skillById } from "../skills/catalog.ts";
import type { TurnAssetStore } from "../stores/assets.ts";
import type { TurnWorkspaceFiles } from "../stores/workspace-files.ts";
import type { TurnEvent } from "./events.ts";
import type { UsageMeter } from "./usage.ts";

export const MODEL_TOOLS = ["llm_query", "llm_query_batched"];
export const CHILD_TOOLS = ["rlm_query", "rlm_query_batched"];
export const HOST_TOOLS = ["list_files", "read_file", "write_file", "load_skill", "create_artifact"];
/** MCP servers' tools (server/mcp-client/): `mcp_call(server, tool, args)`. */
export const MCP_TOOL = "mcp_call";
/**
 * Model calls and MCP calls: they pause the step's clock (interpreter.ts) and run under their own
 * deadlines (an MCP call's is the client's per-call time limit).
 */
export const UNTIMED_TOOLS: ReadonlySet<string> = new Set([...MODEL_TOOLS, ...CHILD_TOOLS, MCP_TOOL]);
const MAX_BATCH = 16;
const MAX_SKILL_LOADS = 4;

export interface HostToolsInput {
  models: ModelService;
  model: Model<Api>;
  usage: UsageMeter;
  signal: AbortSignal;
  emit: (event: TurnEvent) => void;
  /** Deadline of one model query. */
  modelCallTimeoutMs: number;
  /** Calls per turn; past it every call fails. Default: unbounded (a child: its model calls are capped). */
  maxToolCalls?: number;
  /** Root only: absent in a child, which gets model queries and nothing else. */
  root?: {
    runId: string;
    owner: string;
    files: TurnWorkspaceFiles;
    assets: Pick<TurnAssetStore, "addArtifactCandidate">;
    maxArtifactBytes: number;
    /** Throws when `bytes` more do not fit the owner's storage quota. */
    checkQuota: (bytes: number) => Promise<void>;
    /** Skills load_skill may load: the explicit selection, or the whole catalog (up to four loads). */
    loadable: Skill[];
    memoryCategories: string[];
    memories: { category: string; text: string }[];
    runChildren?: (prompts: { prompt: string; label: string }[]) => Promise<string[]>;
    /** MCP servers as tools; absent: no mcp_call. */
    mcp?: Pick<McpClients, "call" | "configs">;
  };
}

const str = (value: unknown, name: string): string => {
  if (typeof value !== "string") throw new Error(`${name} must be a string`);
  return value;
};

const strList = (value: unknown, name: string): string[] => {
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string"))
    throw new Error(`${name} must be a list of strings`);
  if (value.length > MAX_BATCH) throw new Error(`${name} holds at most ${MAX_BATCH} prompts`);
  return value as string[];
};

/** The tool names offered to this interpreter. */
export function toolNames(input: HostToolsInput): string[] {
  const names = [...MODEL_TOOLS];
  if (!input.root) return names;
  if (input.root.runChildren) names.push(...CHILD_TOOLS);
  names.push(...HOST_TOOLS);
  if (input.root.memoryCategories.length > 0) names.push("propose_memory");
  if (input.root.mcp) names.push(MCP_TOOL);
  return names;
}

export function hostToolHandler(input: HostToolsInput) {
  const offered = new Set(toolNames(input));
  const loaded = new Set<string>();
  let callCounter = 0;

  let refused = false;

  const ask = async (prompt: string): Promise<string> => {
    input.usage.countCall();
    const deadline = AbortSignal.timeout(input.modelCallTimeoutMs);
    const reply = await input.models.complete(
      input.model,
      { messages: [{ role: "user", content: prompt, timestamp: Date.now() }] },
      { signal: AbortSignal.any([input.signal, deadline]) },
    );
    if (deadline.aborted && !input.signal.aborted)
      throw new Error(`the model call ran past its limit of ${input.modelCallTimeoutMs / 1000} s`);
    if (replyFailed(reply)) throw new Error(reply.errorMessage ?? "model call failed");
    input.usage.add(reply.usage);
    return replyText(reply);
  };

  const implementations: Record<string, (args: unknown[]) => Promise<unknown>> = {
    llm_query: async ([prompt]) => ask(str(prompt, "prompt")),
    llm_query_batched: async ([prompts]) => Promise.all(strList(prompts, "prompts").map(ask)),
    rlm_query: async ([prompt, label]) => {
      const [answer] = await children()([
        {
          prompt: str(prompt, "prompt"),
          label: typeof label === "string" ? label : str(prompt, "prompt").slice(0, 60),
        },
      ]);
      return answer;
    },
    rlm_query_batched: async ([prompts]) =>
      children()(
        strList(prompts, "prompts").map((prompt, i) => ({
          prompt,
          label: `child ${i + 1}: ${prompt.slice(0, 50)}`,
        })),
      ),
    list_files: async ([path]) =>
      root()
        .files.list(typeof path === "string" ? path : "")
        .items.map(({ path, type, size }) => ({ path, type, size })),
    read_file: async ([path]) => root().files.readText(str(path, "path")),
    write_file: async ([path, text]) =>
      root().files.put(str(path, "path"), str(text, "text"), { overwrite: true }),
    load_skill: async ([id]) => {
      const skillId = str(id, "skill_id");
      const skill = root().loadable.find((s) => s.id === skillId);
      if (!skill || !skillById(skillId)) throw new Error(`skill '${skillId}' is not available in this turn`);
      if (!loaded.has(skillId) && loaded.size >= MAX_SKILL_LOADS)
        throw new Error(`at most ${MAX_SKILL_LOADS} skills per turn`);
      loaded.add(skillId);
      input.emit({
        type: "skill",
        skillId,
        name: skill.name,
        phase: "loaded",
        version: skill.version,
        trust: skill.trust,
        affordances: skill.affordances,
      });
      return `${skill.body}\n\nResources: ${Object.keys(skill.resources).join(", ")}`;
    },
    create_artifact: async ([title, content, mediaType, kind]) => {
      const r = root();
      const bytes = new TextEncoder().encode(str(content, "content"));
      if (bytes.length > r.maxArtifactBytes)
        throw new Error(`artifacts are limited to ${r.maxArtifactBytes} bytes`);
      await r.checkQuota(bytes.length);
      const row = await r.assets.addArtifactCandidate(
        r.owner,
        r.runId,
        {
          title: str(title, "title").slice(0, 200),
          mediaType:
            typeof mediaType === "string" && /^[\w.+-]+\/[\w.+-]+$/.test(mediaType)
              ? mediaType
              : "text/markdown",
          kind: typeof kind === "string" && kind ? kind.slice(0, 50) : "document",
        },
        bytes,
      );
      input.emit({
        type: "artifact",
        artifactId: row.id,
        artifactKind: row.kind,
        title: row.title,
        mediaType: row.media_type,
        byteSize: row.byte_size,
        checksumSha256: row.sha256,
      });
      return { artifactId: row.id, byteSize: row.byte_size, sha256: row.sha256 };
    },
    mcp_call: async ([server, tool, args]) => {
      const r = root();
      const name = str(server, "server");
      const toolName = str(tool, "tool");
      const params = args ?? {};
      if (typeof params !== "object" || Array.isArray(params)) throw new Error("args must be a dict");
      const config = (await r.mcp?.configs(r.owner))?.find((s) => s.name === name && s.enabled);
      if (!config) throw new Error(`no MCP server named '${name}'`);
      // A turn has nobody to ask mid-run: a server that asks before each call is not called from Python.
      if (config.approval !== "allow")
        throw new Error(
          `the MCP server '${name}' asks before each call; set it to "allow" to call it from a turn`,
        );
      const result = await (r.mcp as McpClients).call(
        r.owner,
        name,
        toolName,
        params as Record<string, unknown>,
        {
          signal: input.signal,
        },
      );
      if (result.isError) throw new Error(result.text || `${toolName} failed`);
      return result.text;
    },
    propose_memory: async ([category, text]) => {
      const r = root();
      const c = str(category, "category");
      if (!r.memoryCategories.includes(c))
        throw new Error(`unknown memory category '${c}'; known: ${r.memoryCategories.join(", ")}`);
      r.memories.push({ category: c, text: str(text, "text").slice(0, 4000) });
      return { accepted: true, promotedAfterCommit: true };
    },
  };

  function children() {
    const run = input.root?.runChildren;
    if (!run) throw new Error("child runs are not enabled in this profile");
    return run;
  }

  function root() {
    if (!input.root) throw new Error("host tools are not available in a child run");
    return input.root;
  }

  return async (name: string, args: unknown[]): Promise<unknown> => {
    if (input.maxToolCalls !== undefined && callCounter >= input.maxToolCalls) {
      const message = `the limit of ${input.maxToolCalls} tool calls per turn is reached`;
      if (!refused) {
        refused = true;
        input.emit({
          type: "warning",
          message: `This turn ${message}; further calls fail`,
          code: "tool_call_limit",
        });
      }
      throw new Error(message);
    }
    const impl = offered.has(name) ? implementations[name] : undefined;
    const toolCallId = `call_${++callCounter}`;
    input.emit({ type: "tool_call", toolCallId, toolName: name, input: args });
    try {
      if (!impl) throw new Error(`${name} is not available in this turn`);
      const output = await impl(args);
      input.emit({ type: "tool_result", toolCallId, toolName: name, output: output ?? null, error: null });
      return output;
    } catch (error) {
      const message = (error as Error).message ?? String(error);
      input.emit({ type: "tool_result", toolCallId, toolName: name, output: null, error: message });
      throw error;
    }
  };
}
