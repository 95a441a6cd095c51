/**
 * A small client for the Daytona REST API (the control plane at `SANDBOX_API_URL`) and the toolbox API
 * that runs inside each sandbox (reached through the provider's toolbox proxy,
 * `<toolboxProxyUrl>/<sandboxId>/...`). Written with `fetch` rather than Daytona's SDK, which pulls in
 * axios, OpenTelemetry and WebSocket packages for the dozen calls Atrium makes.
 *
 * Every request is bounded (`requestTimeoutMs`), carries the key only in its `Authorization` header, and
 * goes only to the API's origin or a toolbox host the configuration allows; every failure becomes a
 * `RemoteSandboxError` naming the provider, the call and the status, with the key scrubbed out.
 */

import { isLoopback } from "../../http/client.ts";
import type { RemoteSandboxConfig } from "./remote-config.ts";

export class RemoteSandboxError extends Error {
  constructor(
    message: string,
    /** The provider's HTTP status, when it answered. */
    readonly status?: number,
  ) {
    super(message);
    this.name = "RemoteSandboxError";
  }
}

/** The fields of Daytona's `Sandbox` object that Atrium reads. */
export interface DaytonaSandbox {
  id: string;
  name?: string;
  state?: string;
  errorReason?: string;
  toolboxProxyUrl?: string;
}

export interface CallOptions {
  json?: unknown;
  body?: BodyInit;
  /** The caller's cancellation (an aborted command); reported as an abort, not as a provider error. */
  signal?: AbortSignal;
  /** Answer undefined for a 404 instead of throwing (lookups by name). */
  allowNotFound?: boolean;
}

export interface CallResult {
  status: number;
  type: string;
  bytes: Uint8Array;
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

export class DaytonaClient {
  private readonly api: URL;

  constructor(private readonly config: RemoteSandboxConfig) {
    this.api = new URL(config.apiUrl);
  }

  /** How errors name the provider: its API origin, never a credential. */
  get label(): string {
    return `remote sandbox provider (${this.api.origin})`;
  }

  apiUrl(path: string): string {
    return `${this.config.apiUrl}${path}`;
  }

  /** The toolbox base of a sandbox, refused when the key must not be sent to its host. */
  toolboxBase(proxyUrl: string, sandboxId: string): string {
    let url: URL;
    try {
      url = new URL(proxyUrl);
    } catch {
      throw new RemoteSandboxError(`The ${this.label} reported an invalid toolbox URL`);
    }
    const host = url.hostname.toLowerCase();
    const apiHost = this.api.hostname.toLowerCase();
    const trusted =
      host === apiHost || host.endsWith(`.${apiHost}`) || this.config.toolboxHosts.includes(host);
    const secure = url.protocol === "https:" || (url.protocol === "http:" && isLoopback(host));
    if (!trusted || !secure || url.username || url.password)
      throw new RemoteSandboxError(
        `The ${this.label} reported a toolbox URL on ${url.protocol}//${host}, which is not the API's host: ` +
          "the API key is not sent there (list the host in APP_SANDBOX_TOOLBOX_HOSTS if it is the provider's)",
      );
    return `${url.origin}${url.pathname.replace(/\/+$/, "")}/${encodeURIComponent(sandboxId)}`;
  }

  /** One request with the key; throws a `RemoteSandboxError` for anything but a 2xx (or an allowed 404). */
  async call(
    key: string,
    method: string,
    url: string,
    options: CallOptions = {},
  ): Promise<CallResult | undefined> {
    const where = `${method} ${new URL(url).pathname}`;
    const timeout = AbortSignal.timeout(this.config.requestTimeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const headers: Record<string, string> = { Authorization: `Bearer ${key}`, Accept: "application/json" };
    let body = options.body;
    if (options.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(options.json);
    }
    try {
      const response = await fetch(url, { method, headers, body, signal, redirect: "manual" });
      const bytes = new Uint8Array(await response.arrayBuffer());
      const type = response.headers.get("content-type") ?? "";
      if (response.status === 404 && options.allowNotFound) return undefined;
      if (response.status >= 200 && response.status < 300) return { status: response.status, type, bytes };
      throw new RemoteSandboxError(this.statusMessage(key, where, response.status, bytes), response.status);
    } catch (error) {
      if (error instanceof RemoteSandboxError) throw error;
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      if (timeout.aborted)
        throw new RemoteSandboxError(
          `The ${this.label} did not answer ${where} within ${Math.ceil(this.config.requestTimeoutMs / 1000)} s`,
        );
      const cause = scrub(
        key,
        (error as { code?: string }).code ?? (error as Error).message ?? String(error),
      );
      throw new RemoteSandboxError(`The ${this.label} is unreachable (${where}): ${cause}`);
    }
  }

  async json<T>(key: string, method: string, url: string, options: CallOptions = {}): Promise<T | undefined> {
    const result = await this.call(key, method, url, options);
    if (!result) return undefined;
    if (result.bytes.length === 0) return {} as T;
    try {
      return JSON.parse(new TextDecoder().decode(result.bytes)) as T;
    } catch {
      throw new RemoteSandboxError(`The ${this.label} answered ${method} with a body that is not JSON`);
    }
  }

  private statusMessage(key: string, where: string, status: number, bytes: Uint8Array): string {
    const name = `${status}${STATUS_TEXT[status] ? ` ${STATUS_TEXT[status]}` : ""}`;
    if (status === 401 || status === 403)
      return `The ${this.label} refused the API key (${name}) for ${where}: check SANDBOX_API_KEY or the user's stored sandbox key`;
    const detail = providerDetail(bytes);
    return `The ${this.label} answered ${name} to ${where}${detail ? `: ${scrub(key, detail)}` : ""}`;
  }
}

/** The provider's own message (Daytona answers `{message}`), short, on one line. */
function providerDetail(bytes: Uint8Array): string {
  const text = new TextDecoder().decode(bytes.subarray(0, 4096));
  let detail = text;
  try {
    const parsed = JSON.parse(text) as { message?: unknown; error?: unknown };
    const message = parsed.message ?? parsed.error;
    detail = Array.isArray(message) ? message.join("; ") : typeof message === "string" ? message : "";
  } catch {
    // a plain-text body is its own message
  }
  return detail.replace(/\s+/g, " ").trim().slice(0, 200);
}

/** Removes the key from text that may reach a log or a user (a provider echoing its input). */
export function scrub(key: string, text: string): string {
  return key ? text.split(key).join("[redacted]") : text;
}
