/**
 * Local model servers (Ollama, an OpenAI-compatible server on this machine or the LAN): what Ollama has
 * pulled (its `/api/tags`), and whether a local endpoint accepts connections at all. A local server that
 * refuses the connection is not running: retrying it with backoff (what the runtime does for a cloud
 * provider's overload or 5xx) only delays the answer, so callers probe first and fail at once, naming
 * the server and its URL.
 */
import { connect } from "node:net";

export const OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434";
const PROBE_TIMEOUT_MS = 1500;

/** Ollama's root URL (without `/v1`), from OLLAMA_BASE_URL or its default. */
export function ollamaRoot(baseUrl: string | undefined): string {
  return (baseUrl || OLLAMA_DEFAULT_URL).replace(/\/+$/, "").replace(/\/v1$/, "");
}

/** The models Ollama has pulled (`llama3.2:latest`, ...); throws when it does not answer. */
export async function ollamaTags(root: string, timeoutMs = 5000): Promise<{ id: string; name: string }[]> {
  const response = await fetch(`${root}/api/tags`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`Ollama answered ${response.status} at ${root}/api/tags`);
  const body = (await response.json()) as { models?: unknown };
  const models = Array.isArray(body?.models) ? body.models : [];
  return models
    .filter((m): m is Record<string, unknown> => typeof m === "object" && m !== null)
    .map((m) => String(m.name ?? m.model))
    .map((id) => ({ id, name: id }));
}

/** Whether an Ollama model id names a pulled tag (`llama3.2` is `llama3.2:latest`). */
export function hasOllamaModel(pulled: readonly string[], id: string): boolean {
  return pulled.some((tag) => tag === id || tag === `${id}:latest` || `${tag}:latest` === id);
}

/** A URL whose host is this machine or a private network: a local server, not a cloud API. */
export function isLocalEndpoint(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  } catch {
    return false;
  }
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local")) return true;
  if (host.includes(":")) return host === "::1" || /^f[cd]|^fe[89ab]/.test(host); // IPv6 literal
  if (host === "0.0.0.0") return true;
  const octets = host.split(".").map(Number);
  if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o))) return false;
  const [a = -1, b = -1] = octets;
  return a === 127 || a === 10 || (a === 192 && b === 168) || (a === 172 && b >= 16 && b <= 31);
}

/**
 * Why a local endpoint cannot be reached (it refused, or nothing answered within a moment), or undefined
 * when it accepts connections or is not local. The message names the server and its URL.
 */
export async function localEndpointRefusal(name: string, baseUrl: string): Promise<string | undefined> {
  if (!isLocalEndpoint(baseUrl)) return undefined;
  const url = new URL(baseUrl);
  if (url.port === "0") return undefined; // a placeholder, not a server
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const outcome = await new Promise<string | undefined>((resolve) => {
    const socket = connect({ host, port });
    const finish = (reason: string | undefined) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => finish(`did not answer within ${PROBE_TIMEOUT_MS / 1000} s`));
    socket.once("connect", () => finish(undefined));
    socket.once("error", (error: NodeJS.ErrnoException) =>
      finish(
        error.code === "ECONNREFUSED"
          ? "refused the connection"
          : `is unreachable (${error.code ?? error.message})`,
      ),
    );
  });
  return outcome ? `${name} at ${baseUrl} ${outcome}: is it running?` : undefined;
}
