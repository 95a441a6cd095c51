/**
 * `web_fetch`: fetch one public HTTPS URL for the model, safely, under the server's outbound rule
 * (server/http/outbound/) as a URL a model named: public addresses only, in every mode.
 *
 * - Only `https:` URLs without credentials and not named `localhost`; repository `blob/` URLs become
 *   raw-content URLs.
 * - The host is resolved once, EVERY address it resolves to must be public, and the connection is
 *   pinned to the checked address: a name cannot rebind to a private address between the check and the
 *   connect. TLS still verifies the certificate against the host name.
 * - Redirects are followed, at most 5, each hop checked the same way.
 * - Only `text/*` and `application/json` bodies are returned, at most 1 MiB, within a time limit.
 */
import { isLocalName } from "../../../http/outbound/addresses.ts";
import {
  type Connector,
  pinnedConnector,
  type RawResponse,
  type ResolvedAddress,
  type Resolver,
  readBounded,
} from "../../../http/outbound/connect.ts";
import { outboundFetch } from "../../../http/outbound/fetch.ts";
import { OutboundRefused, PUBLIC_ONLY } from "../../../http/outbound/rule.ts";

export type { Connector, RawResponse, ResolvedAddress, Resolver };
/** A refusal of web_fetch is the outbound rule's refusal. */
export { OutboundRefused as WebFetchRefused, pinnedConnector };

export const MAX_BODY_BYTES = 1024 * 1024;
const MAX_REDIRECTS = 5;
const TIMEOUT_MS = 15_000;
const HEADERS = { "user-agent": "atrium-web-fetch", accept: "text/*, application/json;q=0.9" };

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

/** Repository web pages of a file become the file's raw content. */
export function rawUrlOf(url: URL): URL {
  const github = url.hostname === "github.com" && url.pathname.match(/^\/([^/]+)\/([^/]+)\/blob\/(.+)$/);
  if (github) return new URL(`https://raw.githubusercontent.com/${github[1]}/${github[2]}/${github[3]}`);
  const gitlab = url.hostname === "gitlab.com" && url.pathname.includes("/-/blob/");
  if (gitlab) return new URL(url.href.replace("/-/blob/", "/-/raw/"));
  return url;
}

/** Each hop's URL as web_fetch takes it: https, no credentials, not a local name; blob links raw. */
export function checkedUrl(url: URL): URL {
  if (url.protocol !== "https:")
    throw new OutboundRefused(`only https URLs are fetched (got ${url.protocol})`);
  if (url.username || url.password) throw new OutboundRefused("URLs with credentials are refused");
  if (isLocalName(url.hostname)) throw new OutboundRefused(`${url.hostname} is a local name`);
  return rawUrlOf(url);
}

export async function webFetch(
  raw: string,
  options: WebFetchOptions = {},
  signal?: AbortSignal,
): Promise<WebFetchResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? TIMEOUT_MS);
  const { url, response } = await outboundFetch(raw, {
    rule: PUBLIC_ONLY,
    namedBy: "model",
    request: { headers: HEADERS },
    maxRedirects: MAX_REDIRECTS,
    checkHop: checkedUrl,
    resolve: options.resolve,
    connect: options.connect ?? pinnedConnector(),
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  const contentType = String(response.headers["content-type"] ?? "").toLowerCase();
  const media = contentType.split(";")[0]?.trim() ?? "";
  if (!media.startsWith("text/") && media !== "application/json") {
    response.cancel();
    throw new OutboundRefused(`only text and JSON are returned (got ${media || "no content type"})`);
  }
  const body = await readBounded(response, options.maxBytes ?? MAX_BODY_BYTES);
  const content = new TextDecoder("utf-8", { fatal: false }).decode(body.bytes);
  return { url: url.href, status: response.status, contentType: media, content, truncated: body.truncated };
}
