/**
 * `web_fetch`: fetch one public HTTPS URL for the model, safely.
 *
 * - Only `https:` URLs without credentials; repository `blob/` URLs become raw-content URLs.
 * - The host is resolved once, EVERY address it resolves to must be public (addresses.ts), and the
 *   connection is pinned to the checked address (node:https with a `lookup` that answers it): a name
 *   cannot rebind to a private address between the check and the connect. TLS still verifies the
 *   certificate against the host name.
 * - Redirects are followed by hand, at most 5, each hop checked the same way.
 * - Only `text/*` and `application/json` bodies are returned, at most 1 MiB, within a time limit.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { addressRefusal, isLocalName } from "./addresses.ts";

export const MAX_BODY_BYTES = 1024 * 1024;
const MAX_REDIRECTS = 5;
const TIMEOUT_MS = 15_000;

export class WebFetchRefused extends Error {
  override name = "WebFetchRefused";
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Answers a host name's addresses (the resolver stub in tests). */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: AsyncIterable<Uint8Array>;
  /** Stops reading the body (the connection closes). */
  cancel(): void;
}

/** Sends one GET to `url`, connecting to `pinned` (the injectable connector in tests). */
export type Connector = (url: URL, pinned: ResolvedAddress, signal: AbortSignal) => Promise<RawResponse>;

export interface WebFetchOptions {
  resolve?: Resolver;
  connect?: Connector;
  maxBytes?: number;
  timeoutMs?: number;
}

export interface WebFetchResult {
  url: string;
  status: number;
  contentType: string;
  content: string;
  truncated: boolean;
}

export const systemResolver: Resolver = async (host) => {
  const found = await dnsLookup(host, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * node:https, connecting to the pinned address whatever the name resolves to now (`ca` only for tests
 * with their own certificate authority).
 */
export const pinnedConnector =
  (tls: { ca?: string } = {}): Connector =>
  (url, pinned, signal) =>
    new Promise((resolve, reject) => {
      const request = httpsRequest(
        url,
        {
          method: "GET",
          signal,
          ...(tls.ca ? { ca: tls.ca } : {}),
          headers: { "user-agent": "atrium-web-fetch", accept: "text/*, application/json;q=0.9" },
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
      request.on("error", reject);
      request.end();
    });

/** Repository web pages of a file become the file's raw content. */
export function rawUrlOf(url: URL): URL {
  const github = url.hostname === "github.com" && url.pathname.match(/^\/([^/]+)\/([^/]+)\/blob\/(.+)$/);
  if (github) return new URL(`https://raw.githubusercontent.com/${github[1]}/${github[2]}/${github[3]}`);
  const gitlab = url.hostname === "gitlab.com" && url.pathname.includes("/-/blob/");
  if (gitlab) return new URL(url.href.replace("/-/blob/", "/-/raw/"));
  return url;
}

/** The URL as a checked https URL (or a refusal saying why). */
export function checkedUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new WebFetchRefused(`not a URL: ${raw.slice(0, 200)}`);
  }
  if (url.protocol !== "https:")
    throw new WebFetchRefused(`only https URLs are fetched (got ${url.protocol})`);
  if (url.username || url.password) throw new WebFetchRefused("URLs with credentials are refused");
  if (isLocalName(url.hostname)) throw new WebFetchRefused(`${url.hostname} is a local name`);
  return rawUrlOf(url);
}

/** Resolves `url`'s host and returns the address to pin, refusing when any address is not public. */
async function pinFor(url: URL, resolve: Resolver): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const literal = isIP(host);
  const addresses = literal
    ? [{ address: host, family: literal as 4 | 6 }]
    : await resolve(host).catch(() => []);
  if (addresses.length === 0) throw new WebFetchRefused(`${host} does not resolve`);
  for (const { address } of addresses) {
    const refusal = addressRefusal(address);
    if (refusal) throw new WebFetchRefused(`${host}: ${refusal}`);
  }
  return addresses[0] as ResolvedAddress;
}

export async function webFetch(
  raw: string,
  options: WebFetchOptions = {},
  signal?: AbortSignal,
): Promise<WebFetchResult> {
  const resolve = options.resolve ?? systemResolver;
  const connect = options.connect ?? pinnedConnector();
  const maxBytes = options.maxBytes ?? MAX_BODY_BYTES;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? TIMEOUT_MS);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let url = checkedUrl(raw);
  for (let hop = 0; ; hop++) {
    const pinned = await pinFor(url, resolve);
    const response = await connect(url, pinned, combined);
    if (response.status >= 300 && response.status < 400 && response.headers.location) {
      response.cancel();
      if (hop >= MAX_REDIRECTS) throw new WebFetchRefused(`more than ${MAX_REDIRECTS} redirects`);
      url = checkedUrl(String(response.headers.location), url);
      continue;
    }
    const contentType = String(response.headers["content-type"] ?? "").toLowerCase();
    const media = contentType.split(";")[0]?.trim() ?? "";
    if (!media.startsWith("text/") && media !== "application/json") {
      response.cancel();
      throw new WebFetchRefused(`only text and JSON are returned (got ${media || "no content type"})`);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    let truncated = false;
    for await (const chunk of response.body) {
      const room = maxBytes - size;
      chunks.push(chunk.subarray(0, room));
      size += Math.min(chunk.length, room);
      if (chunk.length > room) {
        truncated = true;
        response.cancel();
        break;
      }
    }
    const content = new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks));
    return { url: url.href, status: response.status, contentType: media, content, truncated };
  }
}
