/**
 * The one loopback rule and the socket peer, for every part of the server that asks "is this this
 * machine?" or "who is on the other end of this socket?" (docs/security.md, "Loopback").
 *
 * Loopback is: the name `localhost` (any case), an IPv4 address in 127.0.0.0/8, `::1`, or an IPv4-mapped
 * address of 127.0.0.0/8 (`::ffff:127.0.0.1`, how a dual-stack socket reports an IPv4 peer). Brackets and
 * an IPv6 zone are ignored. Nothing else counts: not names under `.localhost` (whether they resolve to
 * this machine depends on the resolver, and the checks that ask are the ones that would send a key in
 * clear or open a server to the network), not `0.0.0.0`, not a name that happens to start with `127.`.
 */
import { isIP } from "node:net";
import { addressScope } from "./outbound/addresses.ts";

/** Whether a host name or IP address (a URL's hostname, `--host`, a socket's peer) is this machine. */
export function isLoopback(host: string | undefined): boolean {
  if (!host) return false;
  const plain =
    host
      .replace(/^\[|\]$/g, "")
      .split("%")[0]
      ?.toLowerCase() ?? "";
  if (plain === "localhost") return true;
  return isIP(plain) !== 0 && addressScope(plain) === "loopback";
}

/** What Elysia hands a handler or hook as `server`: enough to ask a request's socket peer. */
export type PeerSource = { requestIP(request: Request): { address: string } | null } | null | undefined;

/**
 * The address of the socket a request came on; undefined when the request was handled in process (tests,
 * Atrium's MCP server calling the families through `app.handle`). Never a header: for the client behind
 * a trusted proxy, ask `ProxyTrust.client` (auth/proxies.ts), which starts from this.
 */
export function peerAddress(server: unknown, request: Request): string | undefined {
  return (server as PeerSource)?.requestIP(request)?.address ?? undefined;
}
