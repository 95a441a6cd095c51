/**
 * `provider/model` (and the offline model): the conversation passed through to the model as the client
 * wrote it. OpenAI messages become pi-ai's context (system prompt, user text and inline images, earlier
 * assistant turns with their tool calls, tool results), the client's tools are offered as they are, and
 * pi-ai's events come back as pieces. Tools run on the client: Atrium only relays the calls.
 */
import type {
  Api,
  AssistantMessage,
  Context,
  Message,
  Model,
  SimpleStreamOptions,
  Tool,
} from "@mariozechner/pi-ai";
import { AppError } from "../http/errors.ts";
import type { ModelService } from "../models/service.ts";
import { badParam } from "./errors.ts";
import type { Piece, TokenUsage } from "./output.ts";
import type { ChatMessage, ChatRequest, ToolChoice } from "./request.ts";

const NO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

function parseArguments(text: string, at: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text || "{}");
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value;
  } catch {
    // reported below
  }
  throw badParam(at, "a tool call's 'arguments' must be a JSON object text");
}

/** The OpenAI messages as pi-ai's context for `model`. */
export function toContext(model: Model<Api>, request: ChatRequest): Context {
  const system: string[] = [];
  const messages: Message[] = [];
  const toolNames = new Map<string, string>();
  const timestamp = Date.now();
  request.messages.forEach((m: ChatMessage, i) => {
    if (m.role === "system") system.push(m.text);
    else if (m.role === "user") {
      if (m.content.some((p) => p.type === "image") && !model.input.includes("image"))
        throw badParam(`messages.${i}.content`, `the model '${request.model}' does not take images`);
      messages.push({ role: "user", content: m.content, timestamp });
    } else if (m.role === "assistant") {
      const content: AssistantMessage["content"] = m.text ? [{ type: "text", text: m.text }] : [];
      m.toolCalls.forEach((call, j) => {
        toolNames.set(call.id, call.name);
        const args = parseArguments(call.arguments, `messages.${i}.tool_calls.${j}.function.arguments`);
        content.push({ type: "toolCall", id: call.id, name: call.name, arguments: args });
      });
      messages.push({
        role: "assistant",
        content,
        api: model.api,
        provider: model.provider,
        model: model.id,
        usage: NO_USAGE,
        stopReason: m.toolCalls.length ? "toolUse" : "stop",
        timestamp,
      });
    } else {
      const toolName = toolNames.get(m.toolCallId);
      if (!toolName)
        throw badParam(
          `messages.${i}.tool_call_id`,
          "a tool message must answer a tool call of an earlier assistant message",
        );
      messages.push({
        role: "toolResult",
        toolCallId: m.toolCallId,
        toolName,
        content: [{ type: "text", text: m.text }],
        isError: false,
        timestamp,
      });
    }
  });
  const tools: Tool[] | undefined =
    request.toolChoice === "none" || request.tools.length === 0
      ? undefined
      : request.tools.map((t) => ({
          name: t.name,
          description: t.description,
          parameters: t.parameters as never,
        }));
  return { systemPrompt: system.length ? system.join("\n\n") : undefined, messages, tools };
}

/** `tool_choice` in the provider's own words, for the APIs pi-ai passes it to. */
function toolChoiceFor(api: Api, choice: ToolChoice | undefined): unknown {
  if (choice === undefined || choice === "none") return undefined;
  if (api.startsWith("anthropic")) {
    if (choice === "auto") return "auto";
    if (choice === "required") return "any";
    return { type: "tool", name: choice.name };
  }
  if (api.startsWith("openai"))
    return typeof choice === "string" ? choice : { type: "function", function: { name: choice.name } };
  return undefined;
}

const usageOf = (message: AssistantMessage): TokenUsage => ({
  prompt_tokens: message.usage.input + message.usage.cacheRead + message.usage.cacheWrite,
  completion_tokens: message.usage.output,
  total_tokens:
    message.usage.totalTokens ||
    message.usage.input + message.usage.cacheRead + message.usage.cacheWrite + message.usage.output,
});

export interface ProviderCall {
  models: ModelService;
  model: Model<Api>;
  request: ChatRequest;
  /** The policy's cap on a reply's tokens. */
  maxTokens: number;
  /** The caller's own stored key for the model's provider (else the model layer's, from the server). */
  apiKey?: string;
}

/** The model's reply to the conversation, as pieces; aborting `signal` stops the provider request. */
export async function* providerPieces(call: ProviderCall, signal: AbortSignal): AsyncGenerator<Piece> {
  const { model, request } = call;
  const context = toContext(model, request);
  const stop = request.stop;
  const options: SimpleStreamOptions & { toolChoice?: unknown } = {
    signal,
    apiKey: call.apiKey,
    temperature: request.temperature,
    maxTokens: Math.min(
      request.maxTokens ?? call.maxTokens,
      call.maxTokens,
      model.maxTokens || call.maxTokens,
    ),
    toolChoice: toolChoiceFor(model.api, request.toolChoice),
    // pi-ai has no stop option: the payload gets it where the API takes it (output.ts cuts the text anyway).
    onPayload: (payload) => withStop(model.api, payload, stop, request.topP),
  };
  const events = call.models.stream(model, context, options);
  for await (const event of events) {
    if (event.type === "text_delta") yield { type: "text", text: event.delta };
    else if (event.type === "thinking_delta") yield { type: "reasoning", text: event.delta };
    else if (event.type === "toolcall_end")
      yield {
        type: "tool_call",
        id: event.toolCall.id,
        name: event.toolCall.name,
        arguments: JSON.stringify(event.toolCall.arguments ?? {}),
      };
    else if (event.type === "done") {
      const reason = event.reason === "toolUse" ? "tool_calls" : event.reason;
      yield { type: "finish", reason, usage: usageOf(event.message) };
    } else if (event.type === "error") {
      if (signal.aborted) return;
      throw new AppError("unavailable", `The model failed: ${event.error.errorMessage ?? "no answer"}`, {
        status: 502,
        code: "upstream_error",
      });
    }
  }
}

function withStop(api: Api, payload: unknown, stop: string[], topP: number | undefined): unknown {
  if (typeof payload !== "object" || payload === null) return undefined;
  const out = payload as Record<string, unknown>;
  if (api === "openai-completions") {
    if (stop.length) out.stop = stop;
    if (topP !== undefined) out.top_p = topP;
  } else if (api === "anthropic-messages") {
    if (stop.length) out.stop_sequences = stop;
    if (topP !== undefined) out.top_p = topP;
  }
  return out;
}
