/**
 * One agent speaking: its model (its own, else the server default) streamed with a system prompt made
 * of who it is, its instructions, the memory it recalls for the prompt and the conversation so far.
 * Narrow dependencies in (the model layer, a recall function, a clock), chunks out through `onChunk`,
 * MCP tool calls, their results and notices through `onEvent`, the whole text returned. A model error becomes a `model_error` refusal that ends the reply, not the
 * socket.
 */
import type { Message, Tool } from "@mariozechner/pi-ai";
import type { Clock } from "../../lib/clock.ts";
import type { ModelService } from "../../models/service.ts";
import type { AgentRecord } from "../stores/agents.ts";
import type { MemoryRecord } from "../stores/memory.ts";
import { type AgentCallEvent, AgentChatError } from "./frames.ts";

/** Memory entries put in an agent's context per message unless its config says otherwise. */
const DEFAULT_MEMORY_LIMIT = 5;

export type AgentModels = Pick<ModelService, "resolve" | "fallbackModel" | "stream">;

/** The model a message to this agent uses now: its own, else the server default. */
export function effectiveModel(agent: { model: string | null }, models: Pick<ModelService, "fallbackModel">) {
  return agent.model ?? models.fallbackModel().id;
}

/** A finite number, or undefined: config values are free-form JSON. */
export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** An MCP tool an agent may call (server/mcp-client/): its model-facing shape and how to run it. */
export interface AgentTool extends Tool {
  run(args: Record<string, unknown>, signal: AbortSignal): Promise<{ text: string; isError: boolean }>;
}

/** Model rounds of one reply when the agent calls tools: past it the reply is what was said. */
const MAX_TOOL_ROUNDS = 8;

/** The MCP servers an agent's config lists (`mcp_servers`), names only. */
export function agentMcpServers(config: Record<string, unknown>): string[] {
  const listed = config.mcp_servers;
  return Array.isArray(listed) ? listed.filter((s): s is string => typeof s === "string") : [];
}

export interface AgentCallDeps {
  models: AgentModels;
  /** The tools of these MCP servers (only those set to "allow": nobody is asked mid-reply). */
  mcpTools?: (servers: string[]) => Promise<{ tools: AgentTool[]; notices: string[] }>;
  /** The memory entries of these holders that fit the prompt, at most `limit`. */
  recall(holders: { id: string; type: string }[], prompt: string, limit: number): Promise<MemoryRecord[]>;
  now: Clock;
}

export interface AgentCall {
  agent: AgentRecord;
  prompt: string;
  /** The conversation so far, one `speaker: text` line per message. */
  conversation: string;
  /** Holders whose memory the agent also recalls (its fleet). */
  holders: { id: string; type: string }[];
  /** The session's or fleet's temperature, which beats the agent's own. */
  temperature?: number;
}

export async function callAgent(
  deps: AgentCallDeps,
  call: AgentCall,
  signal: AbortSignal,
  onChunk: (chunk: string) => void,
  onEvent: (event: AgentCallEvent) => void = () => {},
): Promise<string> {
  const { agent, prompt } = call;
  const model = await deps.models.resolve(effectiveModel(agent, deps.models));
  const limit = num(agent.config.memory_limit) ?? DEFAULT_MEMORY_LIMIT;
  const memories = await deps.recall([{ id: agent.id, type: "agent" }, ...call.holders], prompt, limit);
  const system = [
    `You are ${agent.name}, ${agent.role}.`,
    agent.description,
    agent.instructions,
    memories.length
      ? `Relevant memory:\n${memories.map((m) => `- [${m.type}] ${m.content}`).join("\n")}`
      : "",
    call.conversation ? `Conversation so far:\n${call.conversation}` : "",
  ]
    .filter(Boolean)
    .join("\n\n");
  const servers = agentMcpServers(agent.config);
  const offered = servers.length > 0 && deps.mcpTools ? await deps.mcpTools(servers) : undefined;
  const tools = offered?.tools ?? [];
  for (const message of offered?.notices ?? []) onEvent({ type: "notice", message });
  const messages: Message[] = [{ role: "user", content: prompt, timestamp: deps.now() }];
  let text = "";
  for (let round = 0; round < MAX_TOOL_ROUNDS; round++) {
    const stream = deps.models.stream(
      model,
      {
        systemPrompt: system,
        messages,
        ...(tools.length
          ? { tools: tools.map(({ name, description, parameters }) => ({ name, description, parameters })) }
          : {}),
      },
      {
        temperature: call.temperature ?? num(agent.config.temperature),
        maxTokens: num(agent.config.max_tokens),
        signal,
      },
    );
    for await (const event of stream) {
      if (event.type === "text_delta") {
        text += event.delta;
        onChunk(event.delta);
      } else if (event.type === "error") {
        throw new AgentChatError(
          "model_error",
          `${agent.name}'s model failed: ${event.error.errorMessage ?? event.reason}`,
        );
      }
    }
    const reply = await stream.result();
    const calls = reply.content.filter((part) => part.type === "toolCall");
    if (reply.stopReason !== "toolUse" || calls.length === 0) break;
    messages.push(reply);
    for (const toolCall of calls) {
      const tool = tools.find((t) => t.name === toolCall.name);
      const { id: toolCallId, name } = toolCall;
      onEvent({ type: "tool_call", toolCallId, name, arguments: toolCall.arguments });
      const result = tool
        ? await tool
            .run(toolCall.arguments, signal)
            .catch((error: Error) => ({ text: error.message, isError: true }))
        : { text: `No tool named ${toolCall.name}`, isError: true };
      onEvent({ type: "tool_result", toolCallId, name, content: result.text, isError: result.isError });
      messages.push({
        role: "toolResult",
        toolCallId: toolCall.id,
        toolName: toolCall.name,
        content: [{ type: "text", text: result.text }],
        isError: result.isError,
        timestamp: deps.now(),
      });
    }
  }
  return text;
}
