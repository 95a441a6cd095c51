/**
 * The OpenAI-compatible endpoint's service: the model list, one model, chat completions and embeddings,
 * for one caller. Provider models are passed through to the model layer; agents, fleets, Python turns
 * and search go through those families' own HTTP routes in process with the caller's credential
 * (targets.ts), so owner scoping, token scopes, validation and limits are the families' (as the MCP
 * server does, server/mcp/http.ts). No framework context here: the routes hand in the request.
 */
import type { Identity } from "../auth/identity.ts";
import { covers, missingScope, type Scope } from "../auth/scopes.ts";
import { AppError } from "../http/errors.ts";
import { AtriumHttp, forwardedHeaders, type Handle } from "../mcp/http.ts";
import { providerInfo } from "../models/catalog.ts";
import type { EmbeddingsClient } from "../models/embeddings.ts";
import { type ModelService, UnknownModelError } from "../models/service.ts";
import { badParam, modelNotFound } from "./errors.ts";
import { type ModelKind, OWNED_BY, parseModel, scopeOf } from "./kinds.ts";
import { completion, completionStream, type Pieces } from "./output.ts";
import { providerPieces } from "./provider.ts";
import { type ChatRequest, parseChatRequest } from "./request.ts";
import { targetModels, targetPieces } from "./targets.ts";

export interface OpenAiOptions {
  models: ModelService;
  /** The composed app's `handle`: how agents, fleets, turns and search are reached. */
  handle: Handle;
  /** Protected mode: only personal access tokens are taken. */
  tokensOnly: boolean;
  /** The policy's cap on a reply's tokens (`[openai] max_completion_tokens`). */
  maxCompletionTokens: number;
  /** The policy's embeddings endpoint, when one is configured. */
  embeddings?: EmbeddingsClient;
  /** Ends streams at shutdown. */
  shutdown: AbortSignal;
  /**
   * The keys an owner stored in Settings → Providers (the chat family's), by provider id: a provider
   * model is called with the caller's own key first, the server's when they stored none. Never another
   * user's: the owner is the caller's identity.
   */
  storedKeys?: (owner: string) => Record<string, string> | Promise<Record<string, string>>;
}

/** Who asks, and over which request (its headers are the credential forwarded to the families). */
export interface OpenAiCaller {
  identity: Identity | undefined;
  request: Request;
}

export interface ModelEntry {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
}

const entry = (id: string, kind: ModelKind["kind"]): ModelEntry => ({
  id,
  object: "model",
  created: 0,
  owned_by: OWNED_BY[kind],
});

export class OpenAiService {
  constructor(private readonly options: OpenAiOptions) {}

  /** The caller's own HTTP client into the families (their credential, their request's signal). */
  http(caller: OpenAiCaller, signal = caller.request.signal): AtriumHttp {
    return new AtriumHttp(this.options.handle, {
      origin: new URL(caller.request.url).origin,
      headers: forwardedHeaders(caller.request),
      signal,
    });
  }

  /** 401/403 before anything else: who may use the endpoint at all. */
  admit(caller: OpenAiCaller): void {
    if (this.options.tokensOnly && caller.identity?.kind !== "token")
      throw new AppError(
        "forbidden",
        "On a team server the OpenAI-compatible endpoint takes a personal access token (Authorization: Bearer atr_…): create one in Settings or with `atrium token create`",
        { code: "token_required" },
      );
  }

  /** Whether the caller's token (if any) reaches this kind; throws the 403 naming the scope when not. */
  private require(caller: OpenAiCaller, scope: Scope): void {
    const granted = caller.identity?.scopes;
    const refusal = granted ? missingScope(granted, scope) : undefined;
    if (refusal) throw refusal;
  }

  private reaches(caller: OpenAiCaller, scope: Scope): boolean {
    const granted = caller.identity?.scopes;
    return !granted || covers(granted, scope);
  }

  async list(caller: OpenAiCaller): Promise<{ object: "list"; data: ModelEntry[] }> {
    this.admit(caller);
    const data: ModelEntry[] = [];
    if (this.reaches(caller, "chat:read"))
      for (const m of await this.options.models.list()) data.push(entry(m.key, "provider"));
    if (this.reaches(caller, "turns:read")) data.push(entry("rlm", "rlm"));
    const http = this.http(caller);
    for (const target of await targetModels(http, (scope) => this.reaches(caller, scope)))
      data.push(entry(target.id, target.kind));
    return { object: "list", data };
  }

  async get(caller: OpenAiCaller, id: string): Promise<ModelEntry> {
    const { data } = await this.list(caller);
    const found = data.find((m) => m.id === id);
    if (!found) throw modelNotFound(id);
    return found;
  }

  /** A chat completion: the object, or (`stream: true`) the SSE response. */
  async chat(caller: OpenAiCaller, body: Record<string, unknown>): Promise<unknown> {
    this.admit(caller);
    const request = parseChatRequest(body);
    const { maxCompletionTokens } = this.options;
    if (request.maxTokens !== undefined && request.maxTokens > maxCompletionTokens)
      throw badParam(
        body.max_completion_tokens !== undefined ? "max_completion_tokens" : "max_tokens",
        `This server caps a reply at ${maxCompletionTokens} tokens`,
      );
    const kind = parseModel(request.model);
    if (!kind) throw modelNotFound(request.model);
    this.require(caller, scopeOf(kind.kind));
    const pieces = await this.piecesFor(caller, kind, request);
    const reply = { model: request.model, stop: request.stop };
    const signal = AbortSignal.any([caller.request.signal, this.options.shutdown]);
    if (request.stream)
      return completionStream(pieces, { ...reply, includeUsage: request.includeUsage }, signal);
    return completion(pieces, reply, signal);
  }

  /** What produces the answer for one kind; a model the caller cannot use is model_not_found here. */
  private async piecesFor(caller: OpenAiCaller, kind: ModelKind, request: ChatRequest): Promise<Pieces> {
    if (kind.kind === "rlm" && kind.root !== undefined && !(await this.offersRoot(kind.root)))
      throw modelNotFound(request.model);
    if (kind.kind !== "provider") {
      const key = caller.request.headers.get("idempotency-key") ?? undefined;
      return targetPieces(this.http(caller), kind, request, key);
    }
    let model: Awaited<ReturnType<ModelService["resolve"]>>;
    try {
      model = await this.options.models.resolve(kind.id);
    } catch (error) {
      if (error instanceof UnknownModelError) throw modelNotFound(request.model);
      throw error;
    }
    const owner = caller.identity?.id;
    const stored = owner && this.options.storedKeys ? await this.options.storedKeys(owner) : {};
    const call = {
      models: this.options.models,
      model,
      request,
      maxTokens: this.options.maxCompletionTokens,
      apiKey: providerInfo(model.provider) ? stored[model.provider] : undefined,
    };
    return (signal) => providerPieces(call, signal);
  }

  /**
   * `rlm/<provider/model>`: the root model must be one this server lists as a provider model (the
   * turns API checks it again, with the policy's own model, and answers 400 `model_not_allowed`).
   */
  private async offersRoot(root: string): Promise<boolean> {
    return (await this.options.models.list()).some((m) => m.key === root && m.available);
  }

  /** `POST /v1/embeddings` through the policy's embeddings endpoint (404 when none is configured). */
  async embed(caller: OpenAiCaller, body: Record<string, unknown>) {
    this.admit(caller);
    const client = this.options.embeddings;
    if (!client)
      throw new AppError("not_found", "No embeddings endpoint is configured on this server", {
        code: "model_not_found",
      });
    this.require(caller, "search");
    if (typeof body.model !== "string")
      throw badParam("model", "'model' is required", "missing_required_parameter");
    if (body.model !== client.model) throw modelNotFound(body.model);
    const input = typeof body.input === "string" ? [body.input] : body.input;
    if (
      !Array.isArray(input) ||
      input.length === 0 ||
      input.length > 2048 ||
      !input.every((s) => typeof s === "string")
    )
      throw badParam("input", "'input' must be a string or an array of 1 to 2048 strings");
    // The openai SDKs ask for base64 unless told otherwise (and decode it): both are served.
    const format = body.encoding_format ?? "float";
    if (format !== "float" && format !== "base64")
      throw badParam(
        "encoding_format",
        "'encoding_format' must be 'float' or 'base64'",
        "unsupported_parameter",
      );
    let vectors: Float32Array[];
    try {
      vectors = await client.embed(input as string[], caller.request.signal);
    } catch (error) {
      if (caller.request.signal.aborted) throw error;
      throw new AppError("unavailable", (error as Error).message, { status: 502, code: "upstream_error" });
    }
    const tokens = (input as string[]).reduce((n, s) => n + Math.ceil(s.length / 4), 0);
    return {
      object: "list",
      data: vectors.map((v, index) => ({
        object: "embedding",
        index,
        // base64: the float32 values' bytes, little-endian, as OpenAI sends them.
        embedding: format === "base64" ? base64Of(v) : Array.from(v),
      })),
      model: client.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
  }
}

function base64Of(vector: Float32Array): string {
  const bytes = new DataView(new ArrayBuffer(vector.length * 4));
  for (let i = 0; i < vector.length; i++) bytes.setFloat32(i * 4, vector[i] as number, true);
  return Buffer.from(bytes.buffer).toString("base64");
}
