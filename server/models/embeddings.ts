/**
 * A small client for an OpenAI-compatible embeddings endpoint (`POST {baseUrl}/embeddings` with
 * `{model, input: [texts]}`; OpenAI, Ollama and local servers speak it). pi-ai has no embeddings API, so
 * this sits beside the model descriptor. Texts go in batches; a reply that is not the expected shape, a
 * vector count that differs from the inputs, or vectors of different lengths are errors, never guesses.
 */
import type { AppConfig } from "../config/index.ts";

/**
 * The policy's embeddings endpoint (`[defaults.search] embeddings_model` and the base URL variable), if
 * it names one: the server's search family and the `index` command embed through the same client.
 */
export function policyEmbeddings(config: AppConfig): EmbeddingsClient | undefined {
  const model = config.policy.settings.search?.embeddings_model;
  const baseUrl = config.policy.secrets.embeddingsBaseUrl;
  if (!model || !baseUrl) return undefined;
  return new EmbeddingsClient({ baseUrl, model, apiKey: config.policy.secrets.embeddingsApiKey });
}

export interface EmbeddingsConfig {
  /** The API base, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Texts per request (default 64). */
  batchSize?: number;
  /** Per-request time limit in milliseconds (default 60 s). */
  timeoutMs?: number;
}

export class EmbeddingsError extends Error {}

const MAX_TEXT_CHARS = 8_000;

export class EmbeddingsClient {
  readonly model: string;
  private readonly url: string;

  constructor(private readonly config: EmbeddingsConfig) {
    this.model = config.model;
    this.url = `${config.baseUrl.replace(/\/+$/, "")}/embeddings`;
  }

  /** One vector per text, in order. */
  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const size = this.config.batchSize ?? 64;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += size) {
      out.push(...(await this.batch(texts.slice(i, i + size), signal)));
    }
    const dimension = out[0]?.length;
    if (out.some((v) => v.length !== dimension))
      throw new EmbeddingsError("the embeddings endpoint returned vectors of different lengths");
    return out;
  }

  private async batch(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    const timeout = AbortSignal.timeout(this.config.timeoutMs ?? 60_000);
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: "POST",
        headers,
        body: JSON.stringify({
          model: this.model,
          input: texts.map((t) => t.slice(0, MAX_TEXT_CHARS) || " "),
        }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (error) {
      signal?.throwIfAborted();
      throw new EmbeddingsError(`the embeddings endpoint is unreachable: ${(error as Error).message}`);
    }
    const body = (await response.json().catch(() => undefined)) as
      | { data?: { index?: number; embedding?: unknown }[]; error?: { message?: string } }
      | undefined;
    if (!response.ok)
      throw new EmbeddingsError(
        `the embeddings endpoint answered ${response.status}: ${body?.error?.message ?? response.statusText}`,
      );
    const data = body?.data;
    if (!Array.isArray(data) || data.length !== texts.length)
      throw new EmbeddingsError(
        `the embeddings endpoint answered ${data?.length ?? "no"} vectors for ${texts.length} texts`,
      );
    const ordered = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return ordered.map((item) => {
      const vector = item.embedding;
      if (
        !Array.isArray(vector) ||
        vector.length === 0 ||
        !vector.every((x) => typeof x === "number" && Number.isFinite(x))
      )
        throw new EmbeddingsError(
          "the embeddings endpoint answered something that is not a vector of numbers",
        );
      return Float32Array.from(vector as number[]);
    });
  }
}
