/**
 * The UI's one way to call the server: same-origin fetch (the browser adds Origin and the desktop token
 * cookie), JSON bodies sent as `application/json` (the server refuses other types with 415), and an
 * Error carrying the server's own message on any non-2xx. Also the two stream readers the families use,
 * NDJSON (chat) and SSE (turns, search), over the one reader in common/streams.ts.
 */
import { ndjson, type SseEvent, sseEvents } from "../../common/streams.ts";

/** An HTTP failure: `message` is what the server said; `status` and `body` for callers that branch. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** `init.body` may be a plain object (sent as JSON) or anything fetch takes (FormData, Blob, string). */
export type ApiInit = Omit<RequestInit, "body"> & { body?: unknown };

function isRawBody(body: unknown): body is BodyInit {
  return (
    typeof body === "string" ||
    body instanceof FormData ||
    body instanceof Blob ||
    body instanceof ArrayBuffer ||
    body instanceof URLSearchParams ||
    body instanceof ReadableStream
  );
}

/** Builds the request: JSON-encodes object bodies and sets their content type. */
export function request(path: string, init: ApiInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  let body: BodyInit | undefined;
  if (init.body !== undefined) {
    if (isRawBody(init.body)) body = init.body;
    else {
      body = JSON.stringify(init.body);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
  }
  if (!headers.has("accept")) headers.set("accept", "application/json");
  return fetch(path, { ...init, headers, body, credentials: "same-origin" });
}

/** The server's message from an error response: `{message}`, `{error:{message}}`, or the text itself. */
export async function errorFrom(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  let body: unknown = text;
  let message = text.trim() || `${response.status} ${response.statusText}`.trim();
  try {
    body = JSON.parse(text);
    const b = body as { message?: unknown; error?: { message?: unknown } | string };
    if (typeof b.message === "string") message = b.message;
    else if (typeof b.error === "string") message = b.error;
    else if (b.error && typeof b.error.message === "string") message = b.error.message;
  } catch {
    // not JSON: the text is the message
  }
  return new ApiError(message, response.status, body);
}

/** Calls a JSON route; resolves with the parsed body (undefined for 204), throws ApiError otherwise. */
export async function api<T>(path: string, init: ApiInit = {}): Promise<T> {
  const response = await request(path, init);
  if (!response.ok) throw await errorFrom(response);
  if (response.status === 204) return undefined as T;
  const type = response.headers.get("content-type") ?? "";
  if (!type.includes("json")) return (await response.text()) as T;
  return (await response.json()) as T;
}

/** Each JSON value of an NDJSON body (common/streams.ts reads it). Throws ApiError first when not 2xx. */
export async function* readNdjson<T = unknown>(response: Response): AsyncGenerator<T> {
  if (!response.ok) throw await errorFrom(response);
  if (response.body) yield* ndjson<T>(response.body);
}

/** The events of a `text/event-stream` body (common/streams.ts reads it). Throws ApiError first when not 2xx. */
export async function* readSse(response: Response): AsyncGenerator<SseEvent> {
  if (!response.ok) throw await errorFrom(response);
  if (response.body) yield* sseEvents(response.body);
}
