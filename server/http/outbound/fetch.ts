/**
 * A server-side request under the outbound rule (rule.ts): the URL (http or https) is checked, its host
 * resolved and every address judged for whoever named it, the connection pinned to the checked address
 * (connect.ts; a URL the operator named goes through the platform's fetch unjudged), and a redirect
 * either not followed (the default: it is refused, naming where it pointed) or followed a bounded
 * number of times with each hop checked the same way from the start.
 * The caller reads the final response's body (readBounded) within its own limit.
 */
import {
  type Connector,
  type OutboundRequest,
  pinnedConnector,
  platformRequest,
  type RawResponse,
  type Resolver,
  systemResolver,
} from "./connect.ts";
import { type Namer, OutboundRefused, type OutboundRule, pinTarget } from "./rule.ts";

export interface OutboundOptions {
  rule: OutboundRule;
  namedBy: Namer;
  request?: OutboundRequest;
  /** Redirects followed, each hop checked again (default 0: a redirect is refused). */
  maxRedirects?: number;
  /** The caller's own check of each hop's URL (web_fetch: https only); returns the URL to request. */
  checkHop?: (url: URL) => URL;
  resolve?: Resolver;
  connect?: Connector;
  signal: AbortSignal;
}

/** The final response and the URL that gave it. Throws OutboundRefused before connecting where refused. */
export async function outboundFetch(
  raw: string | URL,
  options: OutboundOptions,
): Promise<{ url: URL; response: RawResponse }> {
  const resolve = options.resolve ?? systemResolver;
  const connect = options.connect ?? pinnedConnector();
  const maxRedirects = options.maxRedirects ?? 0;
  let url = hopUrl(raw, undefined, options.checkHop);
  // The operator's URLs are not judged: the platform's fetch takes them (unless a test injects a connector).
  const platform = options.namedBy === "operator" && !options.connect;
  for (let hop = 0; ; hop++) {
    const response = platform
      ? await platformRequest(url, options.signal, options.request)
      : await connect(
          url,
          await pinTarget(url, options.rule, options.namedBy, resolve),
          options.signal,
          options.request,
        );
    const location = response.headers.location;
    if (response.status < 300 || response.status >= 400 || !location) return { url, response };
    response.cancel();
    if (hop >= maxRedirects) {
      let to = String(location).slice(0, 200);
      try {
        to = new URL(String(location), url).origin;
      } catch {}
      throw new OutboundRefused(
        maxRedirects === 0 ? `a redirect to ${to}, not followed` : `more than ${maxRedirects} redirects`,
        "redirect",
      );
    }
    url = hopUrl(String(location), url, options.checkHop);
  }
}

function hopUrl(raw: string | URL, base: URL | undefined, check?: (url: URL) => URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new OutboundRefused(`not a URL: ${String(raw).slice(0, 200)}`);
  }
  if (check) url = check(url);
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new OutboundRefused(`only http and https URLs are requested (got ${url.protocol})`);
  return url;
}
