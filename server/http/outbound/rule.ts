/**
 * The one rule for every request the server makes to a URL someone else chose (docs/security.md,
 * "Server-side requests"). What may be reached depends on who named the URL:
 *
 * - the operator (a variable or the policy: OLLAMA_BASE_URL, the embeddings endpoint, the model gateway,
 *   the remote sandbox API): anything; the operator owns the network;
 * - a user (a stored Ollama URL, a base URL typed into the connection test): public addresses; an origin
 *   the operator allowed (OLLAMA_BASE_URL's, each of APP_OUTBOUND_ALLOW) at whatever address it has;
 *   and in local mode, where the only user owns the machine, loopback and the private networks too;
 * - a model (web_fetch): public addresses only, whatever the mode.
 *
 * The host is resolved once, EVERY address it resolves to is judged (one bad address refuses the whole
 * name), and the connection is pinned to the checked address (connect.ts). A refusal comes before any
 * connection is opened.
 */
import { isIP } from "node:net";
import { addressRefusal, addressScope } from "./addresses.ts";
import type { ResolvedAddress, Resolver } from "./connect.ts";

export type Namer = "operator" | "user" | "model";

export interface OutboundRule {
  /** Local mode: a user's targets may be on loopback or a private network (their own machine and LAN). */
  local: boolean;
  /** Origins the operator's environment names: reachable on a user's word at any address. */
  allowed: ReadonlySet<string>;
}

/**
 * A request not made (or, for a redirect, not followed): `address` the rule refused an address before
 * connecting, `unresolved` the name has none, `redirect` a redirect was not followed, `url` the URL itself
 * was refused (a scheme, credentials, a local name).
 */
export class OutboundRefused extends Error {
  override name = "OutboundRefused";
  constructor(
    message: string,
    readonly kind: "address" | "unresolved" | "redirect" | "url" = "url",
  ) {
    super(message);
  }
}

/** No allowance at all: public addresses only (what web_fetch and tests of it use). */
export const PUBLIC_ONLY: OutboundRule = { local: false, allowed: new Set() };

/**
 * The rule of a server: `local` its mode, `allow` the origins of APP_OUTBOUND_ALLOW, `operatorUrls` the
 * URLs its environment names for providers (OLLAMA_BASE_URL), whose origins join the allowed ones.
 */
export function outboundRule(options: {
  local: boolean;
  allow: readonly string[];
  operatorUrls: readonly (string | undefined)[];
}): OutboundRule {
  const allowed = new Set(options.allow);
  for (const url of options.operatorUrls) {
    const origin = originOf(url);
    if (origin) allowed.add(origin);
  }
  return { local: options.local, allowed };
}

function originOf(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  try {
    return new URL(raw).origin;
  } catch {
    return undefined;
  }
}

/** Why `namedBy` may not reach `address` for `url`, or undefined when it may. */
export function outboundRefusal(
  rule: OutboundRule,
  namedBy: Namer,
  url: URL,
  address: string,
): string | undefined {
  if (namedBy === "operator") return undefined;
  if (namedBy === "user" && rule.allowed.has(url.origin)) return undefined;
  const why = addressRefusal(address);
  if (!why) return undefined;
  const scope = addressScope(address);
  if (namedBy === "user" && rule.local && (scope === "loopback" || scope === "private")) return undefined;
  if (namedBy === "model") return why;
  return rule.local
    ? why
    : `${why} (on a team server a URL a user gives reaches only public addresses; the operator can allow an origin with APP_OUTBOUND_ALLOW)`;
}

/**
 * Resolves `url`'s host and returns the address to pin; refuses (OutboundRefused) when the name does
 * not resolve or any address it resolves to is not allowed.
 */
export async function pinTarget(
  url: URL,
  rule: OutboundRule,
  namedBy: Namer,
  resolve: Resolver,
): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const literal = isIP(host);
  const addresses = literal
    ? [{ address: host, family: literal as 4 | 6 }]
    : await resolve(host).catch(() => []);
  if (addresses.length === 0) throw new OutboundRefused(`${host} does not resolve`, "unresolved");
  for (const { address } of addresses) {
    const why = outboundRefusal(rule, namedBy, url, address);
    if (why) throw new OutboundRefused(literal ? why : `${host}: ${why}`, "address");
  }
  return addresses[0] as ResolvedAddress;
}
