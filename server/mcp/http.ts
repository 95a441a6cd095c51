/**
 * How the MCP server reaches the families: through their HTTP routes, in process (`app.handle`), with
 * the credential of the MCP request that asked forwarded on each call. So a tool sees exactly what the
 * caller would over HTTP: the same identity, owner scoping, scopes of an access token, validation and
 * limits, and no family is imported here (docs/design.md §14). Failures become `ToolError`s carrying the
 * family's own message, whatever its envelope.
 */
import { sseEvents } from "../../common/streams.ts";

/** Serves one request in process: the composed app's `handle`. */
export type Handle = (request: Request) => Promise<Response>;

/** What a call needs of the MCP request it serves: its origin, credential headers and abort signal. */
export interface Caller {
  /** The origin the MCP client used (links the tools return point there). */
  origin: string;
  /** The MCP request's headers, less those that describe its own body and transport. */
  headers: Headers;
  /** Aborted when the MCP client cancels the call or goes away. */
  signal: AbortSignal;
}

/** A family answered with an error: its status and its message. */
export class ToolError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Headers of the MCP request not forwarded: its own body and transport, and MCP's session headers. */
const NOT_FORWARDED = [
  "content-type",
  "content-length",
  "transfer-encoding",
  "accept",
  "accept-encoding",
  "connection",
  "upgrade",
  "last-event-id",
  "mcp-session-id",
  "mcp-protocol-version",
];

export function forwardedHeaders(request: Request): Headers {
  const headers = new Headers(request.headers);
  for (const name of NOT_FORWARDED) headers.delete(name);
  return headers;
}

export class AtriumHttp {
  constructor(
    private readonly handle: Handle,
    private readonly caller: Caller,
  ) {}

  get origin(): string {
    return this.caller.origin;
  }

  /** The same caller without the abort signal: for the clean-up a cancelled call still has to make. */
  detached(): AtriumHttp {
    return new AtriumHttp(this.handle, { ...this.caller, signal: new AbortController().signal });
  }

  /** Any call; a non-2xx answer becomes a ToolError with the family's message. */
  async send(method: string, path: string, body?: unknown, extra: Record<string, string> = {}) {
    // An id of `..` would be resolved away by the URL parser and reach another route: refused.
    const url = new URL(`${this.caller.origin}${path}`);
    if (url.pathname !== path.split("?")[0])
      throw new ToolError(400, `400: '${path.slice(0, 200)}' is not a valid path (no . or .. segments)`);
    const headers = new Headers(this.caller.headers);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    if (body !== undefined) headers.set("content-type", "application/json");
    const response = await this.handle(
      new Request(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: this.caller.signal,
      }),
    );
    if (!response.ok) throw new ToolError(response.status, await messageOf(response));
    return response;
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await (await this.send(method, path, body)).json()) as T;
  }
}

/** The message of an error answer in any family's envelope. */
async function messageOf(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  let body: { error?: { message?: unknown }; message?: unknown; detail?: unknown } = {};
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the status says it
  }
  const detail = Array.isArray(body.detail)
    ? body.detail
        .map((d: { loc?: unknown[]; msg?: unknown }) => `${(d.loc ?? []).join(".")}: ${d.msg}`)
        .join("; ")
    : body.detail;
  const message = [body.error?.message, body.message, detail].find((m) => typeof m === "string" && m);
  return `${response.status}: ${(message as string | undefined) ?? (text.slice(0, 200) || response.statusText)}`;
}

/**
 * The frames of an SSE body as `{event, data}` (data parsed as JSON when it is), as they arrive: the
 * repository's one SSE reader (common/streams.ts) with JSON on top.
 */
export async function* sseFrames(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ event?: string; data: unknown }> {
  for await (const { event, data } of sseEvents(body)) {
    let parsed: unknown = data;
    try {
      parsed = JSON.parse(data);
    } catch {
      // `[DONE]` and other plain data stay text
    }
    yield { event, data: parsed };
  }
}
