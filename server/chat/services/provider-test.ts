/**
 * A provider's connection test: one cheap authenticated request (its model list; Ollama's `/api/tags`)
 * with a bounded wait, answered in words a person can act on: the URL that did not answer (refused, a
 * name that does not resolve, no answer in time), the provider's own message when it refuses the key,
 * any other status. The key is never part of an answer: it is scrubbed from the provider's message too.
 *
 * Where the server connects: the provider's own host, or a URL the caller gives (a base URL, local mode
 * only; an Ollama URL typed or stored), under the server's outbound rule (server/http/outbound/): a
 * URL a user gives reaches, on a team server, only public addresses or an origin the operator allowed
 * (OLLAMA_BASE_URL's, APP_OUTBOUND_ALLOW), and no redirect is followed; so a user cannot make the server
 * probe hosts on its network. In local mode the user owns the machine: loopback and the private networks
 * are theirs to name.
 */

import { invalidValue } from "../../http/errors.ts";
import { type Connector, type Resolver, readBounded } from "../../http/outbound/connect.ts";
import { outboundFetch } from "../../http/outbound/fetch.ts";
import { type Namer, OutboundRefused, type OutboundRule } from "../../http/outbound/rule.ts";
import type { ProviderInfo } from "../../models/catalog.ts";
import { type ListRequest, refusedWords, requestFor } from "./discover.ts";

export const TEST_TIMEOUT_MS = 5000;
const MESSAGE_BYTES = 4096;

export interface ProviderTestInput {
  apiKey?: string;
  baseUrl?: string;
}

export interface ProviderTestSource {
  info: ProviderInfo;
  /** The key (for Ollama: its URL) from the environment, the operator's choice. */
  envKey?: string;
  /** The caller's stored key (for Ollama: a URL the user chose). */
  storedKey?: string;
  /** Where server-side requests may go; `rule.local` is local mode (a base URL is accepted only there). */
  outbound: OutboundRule;
  /** Seams for tests. */
  resolve?: Resolver;
  connect?: Connector;
}

export type ProviderTestResult =
  | { ok: true; provider: string; detail: string; models: number }
  | { ok: false; provider: string; error: string };

export async function testProvider(
  source: ProviderTestSource,
  input: ProviderTestInput,
): Promise<ProviderTestResult> {
  const { info } = source;
  const local = source.outbound.local;
  const fail = (error: string): ProviderTestResult => ({ ok: false, provider: info.id, error });
  const baseUrl = input.baseUrl?.trim() || undefined;
  if (baseUrl && !local)
    throw invalidValue(
      ["body", "baseUrl"],
      "a base URL is accepted only in local mode: on a team server the server connects to the provider's own address",
    );
  if (baseUrl) checkedBase(baseUrl);
  const typed = input.apiKey?.trim() || undefined;
  const key = typed ?? source.envKey ?? source.storedKey;
  if (info.id === "ollama" && typed) checkedBase(typed);
  if (!key && info.id !== "ollama")
    return fail(`${info.name} has no key: type one above or set ${info.envVarName}`);
  if (info.id === "amazon-bedrock" || info.id === "google-vertex")
    return fail(`${info.name} has no quick connection test: its credentials are checked by the first chat`);
  const request = requestFor(info.id, key, baseUrl);
  const shown = shownUrl(request);
  // Who named the address: the caller (a base URL, an Ollama URL typed or stored, or Ollama's default on
  // this machine when the operator set none), else the operator or the code (a provider's own host).
  const namedBy: Namer = baseUrl || (info.id === "ollama" && (typed || !source.envKey)) ? "user" : "operator";
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), TEST_TIMEOUT_MS);
  try {
    const { response } = await outboundFetch(request.url, {
      rule: source.outbound,
      namedBy,
      request: { headers: request.headers },
      resolve: source.resolve,
      connect: source.connect,
      signal: controller.signal,
    });
    const text = new TextDecoder().decode((await readBounded(response, MESSAGE_BYTES)).bytes);
    if (response.status >= 200 && response.status < 300) {
      let count = 0;
      try {
        count = request.parse(JSON.parse(text)).length;
      } catch {
        return fail(`${info.name} answered at ${shown}, but not with a model list`);
      }
      const models = `${count} model${count === 1 ? "" : "s"}`;
      return {
        ok: true,
        provider: info.id,
        detail: `Connected to ${info.name} at ${shown}: ${models}`,
        models: count,
      };
    }
    const said = providerMessage(text, key);
    const words = said ? `: ${said}` : "";
    if (response.status === 401 || response.status === 403)
      return fail(`${info.name} refused the key (${response.status})${words}`);
    return fail(`${info.name} answered ${response.status} at ${shown}${words}`);
  } catch (error) {
    const refused = refusedWords(info.name, shown, error);
    if (refused) return fail(refused);
    return fail(
      `${info.name} is unreachable at ${shown}: ${networkReason(error, controller.signal.aborted)}`,
    );
  } finally {
    clearTimeout(timer);
  }
}

function checkedBase(raw: string): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidValue(["body", "baseUrl"], "not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw invalidValue(["body", "baseUrl"], "only http and https URLs");
}

/** The URL as a person may see it: no user name or password, no query (Gemini takes a key there). */
function shownUrl(request: ListRequest): string {
  try {
    const url = new URL(request.shownUrl);
    url.username = "";
    url.password = "";
    url.search = "";
    return url.toString();
  } catch {
    return "(an invalid URL)";
  }
}

function networkReason(error: unknown, timedOut: boolean): string {
  if (timedOut) return `no answer within ${TEST_TIMEOUT_MS / 1000} s`;
  if (error instanceof OutboundRefused) return "the host name does not resolve";
  const code = String((error as { code?: string }).code ?? "");
  if (code === "ECONNREFUSED" || code === "ConnectionRefused") return "connection refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "the host name does not resolve";
  if (code.includes("CERT") || code.includes("TLS") || code.includes("SSL")) return `TLS failed (${code})`;
  return code ? `the connection failed (${code})` : "the connection failed";
}

/** The provider's own words: `error.message` (OpenAI, Anthropic, Gemini), `message`, or the text. */
export function providerMessage(text: string, key: string | undefined): string {
  let message = text.trim();
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const error = body.error as Record<string, unknown> | string | undefined;
    const found = (typeof error === "object" && error ? error.message : error) ?? body.message ?? body.detail;
    if (typeof found === "string") message = found;
  } catch {
    // Not JSON: the text as it came.
  }
  return scrubKey(message.replace(/\s+/g, " ").slice(0, 300), key);
}

/** Removes the key and any word that starts like it (providers echo a masked key: `sk-abc1****wxyz`). */
export function scrubKey(message: string, key: string | undefined): string {
  if (!key || key.length < 4) return message;
  const prefix = key.slice(0, Math.min(6, key.length));
  return message
    .split(key)
    .join("[key]")
    .split(/(\s+)/)
    .map((word) => (word.length >= 6 && word.includes(prefix) ? "[key]" : word))
    .join("");
}
