/**
 * Forwarding a checked preview request to the sandbox (HTTP and WebSocket), and what a previewed page
 * may do. A preview is served from the app's own origin, so it is confined like untrusted content:
 *
 * - `Content-Security-Policy: sandbox allow-scripts allow-forms allow-popups allow-modals
 *   allow-downloads` (no `allow-same-origin`): the page runs in an opaque origin. Its requests to
 *   `/api/*` are cross-origin: it cannot read their answers, and its mutations and WebSocket upgrades
 *   carry `Origin: null`, which the surface guard refuses.
 * - Response headers that would act on the app's origin are dropped: `Set-Cookie` (a preview could
 *   plant or shadow the session cookie), `Clear-Site-Data` (sign the user out),
 *   `Strict-Transport-Security`, `Service-Worker-Allowed`, `Alt-Svc`.
 * - The caller's credentials never reach the sandbox: cookies, `Authorization`, the CSRF header and
 *   forwarding headers are dropped; `Host` is the sandbox's own `localhost:<port>`.
 * - `Referrer-Policy: no-referrer`: the signed URL does not leak to third parties the page loads from.
 */
import { HOP_BY_HOP } from "../../http/hop-by-hop.ts";
import type { PreviewUpstream } from "../../sandbox/users/provider-api.ts";
import { connectUnixWebSocket, type WsLink } from "../../sandbox/users/ws-client.ts";

export const PREVIEW_CSP = "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads";

const REQUEST_DROPPED = new Set([
  ...HOP_BY_HOP,
  "host",
  "cookie",
  "authorization",
  "x-app-csrf-token",
  "content-length",
  "forwarded",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-real-ip",
  "sec-websocket-key",
  "sec-websocket-version",
  "sec-websocket-extensions",
  "sec-websocket-accept",
]);
const RESPONSE_DROPPED = new Set([
  ...HOP_BY_HOP,
  "set-cookie",
  "clear-site-data",
  "strict-transport-security",
  "service-worker-allowed",
  "alt-svc",
]);

const error = (status: number, text: string) =>
  new Response(JSON.stringify({ error: text }), { status, headers: { "content-type": "application/json" } });

/** The headers sent to the sandbox: the caller's, minus credentials and hop-by-hop ones. */
export function upstreamHeaders(request: Request, port: number, upstream: PreviewUpstream): Headers {
  const out = new Headers();
  request.headers.forEach((value, name) => {
    if (!REQUEST_DROPPED.has(name.toLowerCase())) out.set(name, value);
  });
  // Over the relay the sandbox's server sees its own localhost; a remote provider's proxy needs its host.
  if (upstream.unix) out.set("host", `localhost:${port}`);
  else out.delete("host");
  for (const [name, value] of Object.entries(upstream.headers ?? {})) out.set(name, value);
  return out;
}

/** The sandbox's answer as the browser gets it: streamed, confined (see the module comment). */
function confined(response: Response): Response {
  const headers = new Headers();
  response.headers.forEach((value, name) => {
    if (!RESPONSE_DROPPED.has(name.toLowerCase())) headers.append(name, value);
  });
  headers.set("content-security-policy", PREVIEW_CSP);
  headers.set("referrer-policy", "no-referrer");
  headers.set("x-frame-options", "SAMEORIGIN");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** Forwards one HTTP request (`rest` is the path after the token, with its query). */
export async function forwardHttp(
  request: Request,
  upstream: PreviewUpstream,
  port: number,
  rest: string,
): Promise<Response> {
  const hasBody = request.method !== "GET" && request.method !== "HEAD";
  const init: RequestInit & { unix?: string; decompress?: boolean; duplex?: "half" } = {
    method: request.method,
    headers: upstreamHeaders(request, port, upstream),
    redirect: "manual",
    decompress: false,
    signal: request.signal,
    ...(hasBody ? { body: request.body, duplex: "half" as const } : {}),
    ...(upstream.unix ? { unix: upstream.unix } : {}),
  };
  try {
    return confined(await fetch(`${upstream.url}${rest}`, init));
  } catch {
    return error(502, `Nothing answers on port ${port} in your sandbox`);
  }
}

export interface WsPeer {
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
}

/** Opens the sandbox side of a preview WebSocket; messages from the client wait until it is open. */
export function forwardWebSocket(
  upstream: PreviewUpstream,
  port: number,
  rest: string,
  request: { headers: Headers },
  client: WsPeer,
): WsLink {
  const headers: Record<string, string> = upstream.unix ? { host: `localhost:${port}` } : {};
  const origin = request.headers.get("origin");
  if (origin) headers.origin = origin;
  const protocol = request.headers.get("sec-websocket-protocol");
  if (protocol) headers["sec-websocket-protocol"] = protocol;
  for (const [name, value] of Object.entries(upstream.headers ?? {})) headers[name] = value;
  const handlers = {
    open() {},
    message: (data: string | Buffer) => client.send(data),
    close: (code: number, reason: string) =>
      client.close(code === 1005 || code === 1006 ? 1011 : code, reason),
  };
  if (upstream.unix) return connectUnixWebSocket(upstream.unix, rest, headers, handlers);
  const queue: (string | Uint8Array)[] = [];
  const url = `${upstream.url.replace(/^http/, "ws")}${rest}`;
  const socket = new WebSocket(url, { headers } as unknown as string[]);
  socket.binaryType = "arraybuffer";
  socket.onopen = () => {
    for (const data of queue.splice(0)) socket.send(data);
  };
  socket.onmessage = (event) =>
    client.send(typeof event.data === "string" ? event.data : new Uint8Array(event.data as ArrayBuffer));
  socket.onclose = (event) => handlers.close(event.code, event.reason);
  return {
    send(data) {
      if (socket.readyState === WebSocket.OPEN) socket.send(data);
      else queue.push(data);
    },
    close(code, reason) {
      socket.close(code, reason);
    },
  };
}
