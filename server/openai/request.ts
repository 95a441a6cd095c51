/**
 * Reads and checks a chat completion request (`POST /v1/chat/completions`) into the plain shape the
 * services use. Checked by hand, not by a schema, so each refusal names the parameter as OpenAI does
 * (`param: "n"`), and a body that is not a chat request says so. What Atrium cannot honour is refused
 * rather than ignored: `n > 1`, `logprobs`, audio in or out. Fields OpenAI clients add that change
 * nothing here (`user`, `seed`, `store`, `metadata`, ...) are accepted and ignored.
 */

import { readCappedJson } from "../http/capped-body.ts";
import { AppError } from "../http/errors.ts";
import { inspectJson } from "../http/json-body.ts";
import { badParam } from "./errors.ts";

export type ContentPart = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

export interface ToolCallIn {
  id: string;
  name: string;
  /** The arguments as the client sent them: a JSON text. */
  arguments: string;
}

export type ChatMessage =
  | { role: "system"; text: string }
  | { role: "user"; content: ContentPart[] }
  | { role: "assistant"; text: string; toolCalls: ToolCallIn[] }
  | { role: "tool"; toolCallId: string; text: string };

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export type ToolChoice = "auto" | "none" | "required" | { name: string };

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  includeUsage: boolean;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  stop: string[];
  tools: ToolSpec[];
  toolChoice?: ToolChoice;
}

/** The largest request body read (images as data URLs fit). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
const MAX_MESSAGES = 2048;
const MAX_TOOLS = 128;

/** The JSON object of a body read up to `max` bytes; 413 past it, 400 for what is not a JSON object. */
export async function readJsonBody(request: Request, max = MAX_BODY_BYTES): Promise<Record<string, unknown>> {
  const read = await readCappedJson(request, max);
  if (!read.ok && read.reason === "too_large")
    throw new AppError("too_large", `A request body is limited to ${max} bytes`);
  if (!read.ok)
    throw new AppError("invalid", "The request body is not valid JSON", {
      issues: [{ loc: ["body"], msg: "not JSON", type: "json_invalid" }],
    });
  const body = read.value;
  const issue = inspectJson(body);
  if (issue) throw new AppError("invalid", `Invalid request body: ${issue.msg}`, { issues: [issue] });
  return body as Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function optionalNumber(body: Record<string, unknown>, key: string, min: number, max: number) {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || value < min || value > max)
    throw badParam(key, `'${key}' must be a number from ${min} to ${max}`);
  return value;
}

/** The parameters refused because Atrium cannot honour them (a client asking for them must know). */
function refuseUnsupported(body: Record<string, unknown>): void {
  if (body.n !== undefined && body.n !== null && body.n !== 1)
    throw badParam("n", "'n' must be 1: Atrium answers with one choice", "unsupported_parameter");
  if (body.logprobs === true || (body.top_logprobs !== undefined && body.top_logprobs !== null))
    throw badParam(
      body.logprobs === true ? "logprobs" : "top_logprobs",
      "'logprobs' is not supported: Atrium's models do not report token probabilities",
      "unsupported_parameter",
    );
  if (body.audio !== undefined && body.audio !== null)
    throw badParam("audio", "'audio' output is not supported", "unsupported_parameter");
  if (Array.isArray(body.modalities) && body.modalities.includes("audio"))
    throw badParam("modalities", "the 'audio' modality is not supported", "unsupported_parameter");
  if (body.functions !== undefined || body.function_call !== undefined)
    throw badParam(
      body.functions !== undefined ? "functions" : "function_call",
      "'functions' and 'function_call' are deprecated: use 'tools' and 'tool_choice'",
      "unsupported_parameter",
    );
}

export function parseChatRequest(body: Record<string, unknown>): ChatRequest {
  if (body.messages === undefined)
    throw badParam(
      "messages",
      "This is not a chat completion request: 'messages' is required (an array of {role, content})",
      "missing_required_parameter",
    );
  if (typeof body.model !== "string" || body.model === "")
    throw badParam(
      "model",
      "'model' is required: a model id from GET /v1/models",
      "missing_required_parameter",
    );
  refuseUnsupported(body);
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw badParam("messages", "'messages' must be a non-empty array");
  if (body.messages.length > MAX_MESSAGES)
    throw badParam("messages", `'messages' holds at most ${MAX_MESSAGES} messages`);
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean")
    throw badParam("stream", "'stream' must be a boolean");
  const streamOptions = body.stream_options;
  if (streamOptions !== undefined && streamOptions !== null && !isObject(streamOptions))
    throw badParam("stream_options", "'stream_options' must be an object");
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  const maxKey = body.max_completion_tokens !== undefined ? "max_completion_tokens" : "max_tokens";
  if (
    maxTokens !== undefined &&
    maxTokens !== null &&
    (!Number.isInteger(maxTokens) || (maxTokens as number) < 1)
  )
    throw badParam(maxKey, `'${maxKey}' must be a positive integer`);
  const tools = parseTools(body.tools);
  return {
    model: body.model,
    messages: body.messages.map((m, i) => parseMessage(m, i)),
    stream: body.stream === true,
    includeUsage: isObject(streamOptions) && streamOptions.include_usage === true,
    temperature: optionalNumber(body, "temperature", 0, 2),
    topP: optionalNumber(body, "top_p", 0, 1),
    maxTokens: (maxTokens as number | null | undefined) ?? undefined,
    stop: parseStop(body.stop),
    tools,
    toolChoice: parseToolChoice(body.tool_choice, tools),
  };
}

function parseStop(stop: unknown): string[] {
  if (stop === undefined || stop === null) return [];
  const list = typeof stop === "string" ? [stop] : stop;
  if (!Array.isArray(list) || list.length > 4 || !list.every((s) => typeof s === "string" && s.length > 0))
    throw badParam("stop", "'stop' must be a string or an array of at most 4 non-empty strings");
  return list as string[];
}

function parseTools(tools: unknown): ToolSpec[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools) || tools.length > MAX_TOOLS)
    throw badParam("tools", `'tools' must be an array of at most ${MAX_TOOLS} functions`);
  return tools.map((tool, i) => {
    const fn =
      isObject(tool) && tool.type === "function" && isObject(tool.function) ? tool.function : undefined;
    if (!fn || typeof fn.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(fn.name))
      throw badParam(
        `tools.${i}`,
        "each tool must be {type: 'function', function: {name (letters, digits, _ and -, up to 64), description?, parameters?}}",
      );
    if (fn.parameters !== undefined && !isObject(fn.parameters))
      throw badParam(`tools.${i}.function.parameters`, "a tool's 'parameters' must be a JSON Schema object");
    return {
      name: fn.name,
      description: typeof fn.description === "string" ? fn.description : "",
      parameters: (fn.parameters as Record<string, unknown> | undefined) ?? {
        type: "object",
        properties: {},
      },
    };
  });
}

function parseToolChoice(choice: unknown, tools: ToolSpec[]): ToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  const name = isObject(choice) && isObject(choice.function) ? choice.function.name : undefined;
  if (typeof name !== "string")
    throw badParam(
      "tool_choice",
      "'tool_choice' must be 'auto', 'none', 'required' or {type: 'function', function: {name}}",
    );
  if (!tools.some((t) => t.name === name))
    throw badParam("tool_choice", `'tool_choice' names '${name.slice(0, 64)}', which is not in 'tools'`);
  return { name };
}

function textOf(content: unknown, at: string): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw badParam(at, "'content' must be a string or an array of parts");
  return content
    .map((part, i) => {
      if (isObject(part) && part.type === "text" && typeof part.text === "string") return part.text;
      if (isObject(part) && part.type === "refusal" && typeof part.refusal === "string") return part.refusal;
      throw badParam(`${at}.${i}`, "only text parts are accepted in this message");
    })
    .join("");
}

const DATA_URL = /^data:(image\/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/=\s]+)$/;

function userContent(content: unknown, at: string): ContentPart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw badParam(at, "'content' must be a string or an array of parts");
  return content.map((part, i): ContentPart => {
    if (isObject(part) && part.type === "text" && typeof part.text === "string")
      return { type: "text", text: part.text };
    if (isObject(part) && part.type === "input_audio")
      throw badParam(`${at}.${i}`, "audio input is not supported", "unsupported_parameter");
    if (isObject(part) && part.type === "image_url") {
      const url = isObject(part.image_url) ? part.image_url.url : undefined;
      // Only inline images: fetching a URL the caller names would make the server a proxy to any address.
      const match = typeof url === "string" ? DATA_URL.exec(url) : null;
      if (!match)
        throw badParam(
          `${at}.${i}.image_url.url`,
          "images must be inline data URLs (data:image/png;base64,...): Atrium does not fetch image URLs",
        );
      return { type: "image", mimeType: match[1] as string, data: (match[2] as string).replace(/\s/g, "") };
    }
    throw badParam(
      `${at}.${i}`,
      "a content part must be {type: 'text', text} or {type: 'image_url', image_url: {url}}",
    );
  });
}

function parseMessage(message: unknown, i: number): ChatMessage {
  const at = `messages.${i}`;
  if (!isObject(message) || typeof message.role !== "string")
    throw badParam(at, "each message must be an object with a 'role'");
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", text: textOf(message.content, `${at}.content`) };
    case "user":
      return { role: "user", content: userContent(message.content, `${at}.content`) };
    case "assistant": {
      const calls = message.tool_calls ?? [];
      if (!Array.isArray(calls)) throw badParam(`${at}.tool_calls`, "'tool_calls' must be an array");
      const toolCalls = calls.map((call, j) => {
        const fn = isObject(call) && isObject(call.function) ? call.function : undefined;
        if (!fn || !isObject(call) || typeof call.id !== "string" || typeof fn.name !== "string")
          throw badParam(
            `${at}.tool_calls.${j}`,
            "a tool call must be {id, type: 'function', function: {name, arguments}}",
          );
        const args = typeof fn.arguments === "string" ? fn.arguments : "{}";
        return { id: call.id, name: fn.name, arguments: args };
      });
      return { role: "assistant", text: textOf(message.content, `${at}.content`), toolCalls };
    }
    case "tool":
      if (typeof message.tool_call_id !== "string")
        throw badParam(`${at}.tool_call_id`, "a tool message needs the 'tool_call_id' it answers");
      return {
        role: "tool",
        toolCallId: message.tool_call_id,
        text: textOf(message.content, `${at}.content`),
      };
    default:
      throw badParam(`${at}.role`, "'role' must be system, developer, user, assistant or tool");
  }
}

/** The last user message's text (agents, fleets, turns and search take one message). */
export function lastUserText(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "user") return m.content.map((p) => (p.type === "text" ? p.text : "")).join("");
  }
  return "";
}
