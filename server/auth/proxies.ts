/**
 * Who the client is behind a reverse proxy (`--trust-proxy`). `X-Forwarded-For` and
 * `X-Forwarded-Proto` are believed only when the socket peer is a proxy the operator named (addresses,
 * CIDR ranges, or `loopback`); otherwise anyone could claim any address and dodge the sign-in limits,
 * or claim HTTPS. The client is the right-most forwarded address that is not itself a trusted proxy.
 */
import { BlockList, isIP } from "node:net";
import { peerAddress } from "../http/client.ts";

export class ProxyTrustError extends Error {
  override name = "ProxyTrustError";
}

export interface ClientInfo {
  /** The client's address, or undefined when unknown (handled in process, no socket). */
  address: string | undefined;
  /** Whether the client reached us over HTTPS (directly, or through a trusted proxy that says so). */
  https: boolean;
}

export class ProxyTrust {
  private readonly trusted = new BlockList();
  readonly any: boolean;

  constructor(entries: readonly string[]) {
    for (const entry of entries) this.add(entry.trim());
    this.any = entries.length > 0;
  }

  private add(entry: string): void {
    // The loopback rule's addresses (http/client.ts); the IPv4-mapped form is unwrapped in isTrusted.
    if (entry === "loopback") {
      this.trusted.addSubnet("127.0.0.0", 8, "ipv4");
      this.trusted.addAddress("::1", "ipv6");
      return;
    }
    const [address, bits] = entry.split("/");
    const family = isIP(address ?? "");
    if (family === 0)
      throw new ProxyTrustError(`--trust-proxy '${entry}' is not an IP address, CIDR range or 'loopback'`);
    const type = family === 4 ? "ipv4" : "ipv6";
    if (bits === undefined) {
      this.trusted.addAddress(address as string, type);
      return;
    }
    const prefix = Number(bits);
    if (!/^\d{1,3}$/.test(bits) || prefix > (family === 4 ? 32 : 128)) {
      throw new ProxyTrustError(`--trust-proxy '${entry}' has an invalid prefix length`);
    }
    this.trusted.addSubnet(address as string, prefix, type);
  }

  isTrusted(address: string | undefined): boolean {
    if (!address || !this.any) return false;
    const plain = address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    const family = isIP(plain);
    if (family === 0) return false;
    return this.trusted.check(plain, family === 4 ? "ipv4" : "ipv6");
  }

  /** The client of a request, from the socket's peer that `server` reports (undefined in process). */
  client(request: Request, server: unknown): ClientInfo {
    return this.clientOf(request, peerAddress(server, request));
  }

  /** The client behind `peer` (the socket's address) for this request. */
  clientOf(request: Request, peer: string | undefined): ClientInfo {
    const direct = { address: peer, https: request.url.startsWith("https:") };
    if (!this.isTrusted(peer)) return direct;
    const forwarded = (request.headers.get("x-forwarded-for") ?? "")
      .split(",")
      .map((part) => part.trim())
      .filter((part) => isIP(part) !== 0);
    let address = peer;
    for (let i = forwarded.length - 1; i >= 0; i--) {
      address = forwarded[i];
      if (!this.isTrusted(address)) break;
    }
    const proto = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
    return { address, https: proto === undefined ? direct.https : proto === "https" };
  }
}
