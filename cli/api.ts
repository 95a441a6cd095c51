/**
 * The terminal client's one way to the server: the base URL, the credential, JSON requests and stream
 * requests, and every failure as an ApiError with a code and a message (the family's envelope read, a
 * connection that failed named as such, a 401 saying how to sign in). A client of the HTTP API only:
 * nothing here knows the server's internals.
 */
import { credentialFor } from "./credentials.ts";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8000";

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** The HTTP status, or 0 when no answer came (connection failed). */
    readonly status = 0,
  ) {
    super(message);
  }
}

/** `--url`, else `APP_BASE_URL`, else the default; a URL that does not parse is refused here. */
export function baseUrlOf(flag: string | undefined, env: Record<string, string | undefined>): string {
  const raw = flag ?? env.APP_BASE_URL ?? DEFAULT_BASE_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError("invalid_url", `not a URL: ${raw}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ApiError("invalid_url", `not an http(s) URL: ${raw}`);
  return url.href.replace(/\/+$/, "");
}

/** A code for an answer whose body names none (chat's `{message}`, a proxy's page). */
const STATUS_CODES: Record<number, string> = {
  400: "invalid_request",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  413: "too_large",
  415: "unsupported_media_type",
  421: "misdirected_request",
  422: "invalid_request",
  429: "rate_limited",
  501: "not_implemented",
  502: "bad_gateway",
  503: "unavailable",
  504: "gateway_timeout",
};

/** What a failed answer says, whatever the family: turns `{error:{code,message}}`, chat `{message}`, ... */
async function errorOf(response: Response, base: string): Promise<ApiError> {
  if (response.status === 401)
    return new ApiError(
      "unauthorized",
      `${base} needs you to sign in: run \`atrium login --url ${base}\`, or set APP_TOKEN to a bearer token`,
      401,
    );
  const text = await response.text().catch(() => "");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const b = (body ?? {}) as {
    error?: { code?: unknown; message?: unknown };
    message?: unknown;
    detail?: unknown;
  };
  const code =
    typeof b.error?.code === "string"
      ? b.error.code
      : (STATUS_CODES[response.status] ?? `http_${response.status}`);
  const message =
    typeof b.error?.message === "string"
      ? b.error.message
      : typeof b.message === "string"
        ? b.message
        : typeof b.detail === "string"
          ? b.detail
          : text.trim().slice(0, 200) || response.statusText || `HTTP ${response.status}`;
  return new ApiError(code, message, response.status);
}

/** A fetch that failed without an answer: the server is not there (or went away). */
function unreachable(base: string, error: unknown): ApiError {
  const cause = (error as { code?: string; message?: string }) ?? {};
  const why = cause.code ?? cause.message ?? String(error);
  return new ApiError("connection_failed", `cannot reach ${base} (${why})`);
}

export interface ApiOptions {
  baseUrl: string;
  /** A bearer token: APP_TOKEN, else the one `atrium login` saved for this server. */
  token?: string;
}

export class Api {
  readonly baseUrl: string;
  private readonly token: string | undefined;

  constructor({ baseUrl, token }: ApiOptions) {
    this.baseUrl = baseUrl;
    this.token = token;
  }

  /** From the command line and the environment: the base URL and the credential that goes with it. */
  static from(urlFlag: string | undefined, env: Record<string, string | undefined> = process.env): Api {
    const baseUrl = baseUrlOf(urlFlag, env);
    return new Api({ baseUrl, token: env.APP_TOKEN || credentialFor(baseUrl, env) });
  }

  url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const headers: Record<string, string> = { accept: "application/json", ...extra };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    return headers;
  }

  /** Any request; a non-2xx answer becomes an ApiError. */
  async fetch(path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
    let response: Response;
    try {
      // Redirects are not followed: the token goes to the server it was given for, nowhere else.
      response = await fetch(this.url(path), {
        ...init,
        redirect: "manual",
        headers: this.headers(init.headers),
      });
    } catch (error) {
      if (init.signal?.aborted) throw error;
      throw unreachable(this.baseUrl, error);
    }
    if (response.status >= 300 && response.status < 400) {
      const location = response.headers.get("location") ?? "elsewhere";
      throw new ApiError(
        "redirected",
        `${this.baseUrl} redirects to ${location}: give that address with --url`,
        response.status,
      );
    }
    if (!response.ok) throw await errorOf(response, this.baseUrl);
    return response;
  }

  async get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return (await (await this.fetch(path, { signal })).json()) as T;
  }

  async send<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const init: RequestInit & { headers: Record<string, string> } = { method, signal, headers: {} };
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await this.fetch(path, init);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** A streaming POST (SSE or NDJSON): the open response, its body not yet read. */
  stream(path: string, body: unknown, headers: Record<string, string>, signal?: AbortSignal) {
    return this.fetch(path, {
      method: "POST",
      signal,
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  }

  /** A multipart upload of one file as field `file`. */
  async upload<T>(path: string, file: Blob, filename: string): Promise<T> {
    const form = new FormData();
    form.append("file", file, filename);
    return (await (await this.fetch(path, { method: "POST", body: form })).json()) as T;
  }
}
