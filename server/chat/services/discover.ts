/**
 * What a configured provider offers: Ollama's local tags (`/api/tags`), the model lists of providers
 * whose API has one (OpenAI-compatible `/models`, Anthropic, Gemini), pi-ai's built-in catalog for the
 * cloud platforms without a simple list call. An unreachable or refusing provider gives a clear
 * diagnostic, never an error. The key goes only to the provider's own host.
 *
 * The request follows the server's outbound rule (server/http/outbound/): an Ollama URL a user stored
 * is a URL a user named, so on a team server it reaches only public addresses or an origin the operator
 * allowed, with no redirect followed; it is refused before any connection otherwise, and the diagnostic
 * says so without telling whether anything listens there.
 */
import type { Api, KnownProvider, Model } from "@mariozechner/pi-ai";
import { type Connector, type Resolver, readBounded } from "../../http/outbound/connect.ts";
import { outboundFetch } from "../../http/outbound/fetch.ts";
import { type Namer, OutboundRefused, type OutboundRule } from "../../http/outbound/rule.ts";
import type { ProviderInfo } from "../../models/catalog.ts";
import { loadPiAi } from "../../models/pi-ai.ts";

export interface Discovery {
  provider: string;
  reachable: boolean;
  models: { id: string; name?: string }[];
  diagnostics: string[];
}

const TIMEOUT_MS = 5000;
/** A model list larger than this is not a model list. */
const MAX_LIST_BYTES = 4 * 1024 * 1024;
const OPENAI_COMPATIBLE: Record<string, string> = {
  openai: "https://api.openai.com/v1",
  groq: "https://api.groq.com/openai/v1",
  mistral: "https://api.mistral.ai/v1",
};

/** Where a server-side request may go (the outbound rule) and who named its URL; seams for tests. */
export interface Outbound {
  rule: OutboundRule;
  namedBy: Namer;
  resolve?: Resolver;
  connect?: Connector;
}

export async function discoverModels(
  info: ProviderInfo,
  key: string | undefined,
  outbound: Outbound,
): Promise<Discovery> {
  const result: Discovery = { provider: info.id, reachable: false, models: [], diagnostics: [] };
  if (!key && info.id !== "ollama") {
    result.diagnostics.push(`${info.name} is not configured: set ${info.envVarName} or store a key`);
    return result;
  }
  if (info.id === "amazon-bedrock" || info.id === "google-vertex") {
    result.models = await catalog(info.id);
    result.diagnostics.push(`${info.name} has no simple list call: these are the models pi-ai knows`);
    return result;
  }
  const request = requestFor(info.id, key);
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  try {
    const { response } = await outboundFetch(request.url, {
      ...outbound,
      request: { headers: request.headers },
      signal,
    });
    const body = await readBounded(response, MAX_LIST_BYTES);
    if (response.status < 200 || response.status >= 300) {
      result.diagnostics.push(`${info.name} answered ${response.status} at ${request.shownUrl}`);
      return result;
    }
    result.models = request.parse(JSON.parse(new TextDecoder().decode(body.bytes)));
    result.reachable = true;
  } catch (error) {
    const refused = refusedWords(info.name, request.shownUrl, error);
    if (refused) {
      result.diagnostics.push(refused);
      return result;
    }
    const reason = signal.aborted ? `no answer within ${TIMEOUT_MS / 1000} s` : "unreachable";
    result.diagnostics.push(`${info.name} is ${reason} at ${request.shownUrl}`);
  }
  return result;
}

/**
 * What to say when the outbound rule kept a request from being made (the address refused before any
 * connection, a redirect not followed, the URL refused), or undefined for any other failure.
 */
export function refusedWords(name: string, shownUrl: string, error: unknown): string | undefined {
  if (!(error instanceof OutboundRefused) || error.kind === "unresolved") return undefined;
  if (error.kind === "address")
    return `${name} at ${shownUrl} was refused before connecting: ${error.message}`;
  return `${name} at ${shownUrl}: ${error.message}`;
}

export interface ListRequest {
  url: string;
  /** The URL without credentials, for diagnostics. */
  shownUrl: string;
  headers: Record<string, string>;
  parse(body: unknown): { id: string; name?: string }[];
}

/**
 * The provider's cheapest authenticated call: its model list. `base` replaces the provider's API base
 * (the part the list path is appended to: `https://api.openai.com/v1`); for Ollama the key is its URL.
 */
export function requestFor(provider: string, key: string | undefined, base?: string): ListRequest {
  const root = base?.replace(/\/+$/, "");
  if (provider === "ollama") {
    const at = (root ?? key ?? "http://127.0.0.1:11434").replace(/\/+$/, "").replace(/\/v1$/, "");
    return {
      url: `${at}/api/tags`,
      shownUrl: `${at}/api/tags`,
      headers: {},
      parse: (body) =>
        list(body, "models").map((m) => ({ id: String(m.name ?? m.model), name: String(m.name ?? m.model) })),
    };
  }
  if (provider === "anthropic") {
    const url = `${root ?? "https://api.anthropic.com/v1"}/models`;
    return {
      url,
      shownUrl: url,
      headers: { "x-api-key": key ?? "", "anthropic-version": "2023-06-01" },
      parse: (body) =>
        list(body, "data").map((m) => ({
          id: String(m.id),
          name: m.display_name ? String(m.display_name) : undefined,
        })),
    };
  }
  if (provider === "google") {
    const url = `${root ?? "https://generativelanguage.googleapis.com/v1beta"}/models`;
    return {
      url,
      shownUrl: url,
      headers: { "x-goog-api-key": key ?? "" },
      parse: (body) =>
        list(body, "models").map((m) => ({
          id: String(m.name).replace(/^models\//, ""),
          name: m.displayName ? String(m.displayName) : undefined,
        })),
    };
  }
  const at = root ?? OPENAI_COMPATIBLE[provider] ?? "";
  return {
    url: `${at}/models`,
    shownUrl: `${at}/models`,
    headers: { authorization: `Bearer ${key}` },
    parse: (body) => list(body, "data").map((m) => ({ id: String(m.id) })),
  };
}

function list(body: unknown, field: string): Record<string, unknown>[] {
  const items = (body as Record<string, unknown> | null)?.[field];
  return Array.isArray(items) ? items.filter((i) => typeof i === "object" && i !== null) : [];
}

async function catalog(provider: string): Promise<{ id: string; name?: string }[]> {
  const { getModels } = await loadPiAi();
  return (getModels(provider as KnownProvider) as Model<Api>[]).map((m) => ({ id: m.id, name: m.name }));
}
