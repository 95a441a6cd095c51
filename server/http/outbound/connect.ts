/**
 * The two steps of a server-side request that the outbound rule sits between: resolving a host name to
 * its addresses (the resolver; a stub in tests), and connecting to ONE address already checked (the
 * pinned connector: node:http/node:https with a `lookup` that answers that address, so the name cannot
 * rebind between the check and the connect; TLS still verifies the certificate against the name). A
 * connection is never pooled: a socket opened for one check is never reused for another request.
 * A URL the operator named is not judged, so there is nothing to pin: it goes through the platform's
 * fetch (platformRequest), which honours the operator's proxy variables as before.
 */
import type { IncomingHttpHeaders } from "node:http";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Answers a host name's addresses (the resolver stub in tests). */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) => {
  // node:dns, node:http and node:https load with the first outbound request: together they cost a
  // server start about 45 ms of CPU (docs/benchmarks.md, "Cold start").
  const { lookup } = await import("node:dns/promises");
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** What a request sends besides its URL. */
export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: AsyncIterable<Uint8Array>;
  /** Stops reading the body (the connection closes). */
  cancel(): void;
}

/** Sends one request to `url`, connecting to `pinned` (the injectable connector in tests). */
export type Connector = (
  url: URL,
  pinned: ResolvedAddress,
  signal: AbortSignal,
  request?: OutboundRequest,
) => Promise<RawResponse>;

/** node:http or node:https by the URL's scheme, connecting to the pinned address (`ca`: tests' own CA). */
export const pinnedConnector =
  (tls: { ca?: string } = {}): Connector =>
  async (url, pinned, signal, request = {}) => {
    const send =
      url.protocol === "https:" ? (await import("node:https")).request : (await import("node:http")).request;
    return new Promise((resolve, reject) => {
      const outgoing = send(
        url,
        {
          method: request.method ?? "GET",
          signal,
          agent: false,
          ...(tls.ca ? { ca: tls.ca } : {}),
          headers: request.headers ?? {},
          lookup: (_host, options, callback) => {
            if ((options as { all?: boolean }).all) callback(null, [pinned] as never, pinned.family);
            else callback(null, pinned.address, pinned.family);
          },
        },
        (response) =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: response,
            cancel: () => response.destroy(),
          }),
      );
      outgoing.on("error", reject);
      outgoing.end(request.body);
    });
  };

/** One request with the platform's fetch (proxy variables honoured), never following a redirect. */
export async function platformRequest(
  url: URL,
  signal: AbortSignal,
  request: OutboundRequest = {},
): Promise<RawResponse> {
  const response = await fetch(url, {
    method: request.method ?? "GET",
    headers: request.headers,
    body: request.body,
    signal,
    redirect: "manual",
  });
  const body = response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers as unknown as Iterable<[string, string]>),
    body: body as unknown as AsyncIterable<Uint8Array>,
    cancel: () => void body.cancel().catch(() => {}),
  };
}

/** The body as bytes, at most `max` of them (the rest is not read); `truncated` when there was more. */
export async function readBounded(
  response: RawResponse,
  max: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    const room = max - size;
    chunks.push(chunk.subarray(0, room));
    size += Math.min(chunk.length, room);
    if (chunk.length > room) {
      response.cancel();
      return { bytes: Buffer.concat(chunks), truncated: true };
    }
  }
  return { bytes: Buffer.concat(chunks), truncated: false };
}
