/**
 * Which addresses a server-side request may connect to (the outbound rule, rule.ts): public unicast.
 * Not public: loopback, "this network"
 * (0.0.0.0/8 reaches localhost on Linux), private (10/8, 172.16/12, 192.168/16), carrier-grade NAT
 * (100.64/10), link-local (169.254/16, fe80::/10: cloud metadata lives there), unique-local fc00::/7,
 * multicast, broadcast and reserved ranges, documentation and benchmark ranges, the unspecified `::`,
 * and IPv6 forms that carry an IPv4 address (IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96, NAT64
 * 64:ff9b::/96, 6to4 2002::/16), which are judged by the IPv4 address they carry. Teredo, the local-use
 * NAT64 prefix and site-local are refused outright. Host names are judged after DNS resolution; only
 * `localhost` names are refused by name (by web_fetch).
 *
 * Of the addresses that are not public, two scopes matter to the rule: loopback (127/8, ::1) and the
 * private networks (10/8, 172.16/12, 192.168/16, carrier-grade NAT 100.64/10 as VPN overlays use it,
 * unique-local fc00::/7): a local-mode user may name those. Everything else (link-local and its cloud
 * metadata, "this network", multicast, reserved) is never reached on anyone's word but the operator's.
 */
import { BlockList, isIP } from "node:net";

function blockList(family: "ipv4" | "ipv6", subnets: readonly (readonly [string, number])[]): BlockList {
  const list = new BlockList();
  for (const [net, bits] of subnets) list.addSubnet(net, bits, family);
  return list;
}

const V4_BLOCKED = blockList("ipv4", [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
]);

const V6_BLOCKED = blockList("ipv6", [
  ["::", 128],
  ["::1", 128],
  ["100::", 64],
  ["64:ff9b:1::", 48],
  ["2001::", 32],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
]);

/** The 16 bytes of an IPv6 address (a dotted IPv4 tail allowed), or undefined when it is not one. */
export function ipv6Bytes(address: string): Uint8Array | undefined {
  const text = address.replace(/^\[|\]$/g, "").split("%")[0] as string;
  if (isIP(text) !== 6) return undefined;
  let head = text;
  const tail: number[] = [];
  const dotted = text.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    head = `${dotted[1]}0:0`;
    tail.push(...(dotted[2] as string).split(".").map(Number));
  }
  const [left, right] = head.includes("::") ? head.split("::") : [head, undefined];
  const groups = (s: string | undefined) => (s ? s.split(":").filter((g) => g !== "") : []);
  const l = groups(left);
  const r = groups(right);
  const words = right === undefined ? l : [...l, ...Array(8 - l.length - r.length).fill("0"), ...r];
  if (words.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  words.forEach((word, i) => {
    const value = Number.parseInt(word, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  if (tail.length === 4) bytes.set(tail, 12);
  return bytes;
}

const v4 = (b: Uint8Array, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
const zero = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
export function embeddedIPv4(bytes: Uint8Array): string | undefined {
  if (zero(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return v4(bytes, 12);
  if (zero(bytes, 0, 12)) return v4(bytes, 12);
  if (
    bytes[0] === 0x00 &&
    bytes[1] === 0x64 &&
    bytes[2] === 0xff &&
    bytes[3] === 0x9b &&
    zero(bytes, 4, 12)
  ) {
    return v4(bytes, 12);
  }
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return v4(bytes, 2);
  return undefined;
}

/** The 16 bytes as eight hex groups, the form BlockList checks. */
function canonical(bytes: Uint8Array): string {
  return Array.from({ length: 8 }, (_, i) =>
    (((bytes[i * 2] as number) << 8) | (bytes[i * 2 + 1] as number)).toString(16),
  ).join(":");
}

/** Why connecting to this IP address is refused, or undefined when it is public. */
export function addressRefusal(address: string): string | undefined {
  const plain = address.replace(/^\[|\]$/g, "");
  const family = isIP(plain.split("%")[0] as string);
  if (family === 4) return V4_BLOCKED.check(plain, "ipv4") ? `${plain} is not a public address` : undefined;
  if (family !== 6) return `${address} is not an IP address`;
  const bytes = ipv6Bytes(plain);
  if (!bytes) return `${address} is not an IP address`;
  const embedded = embeddedIPv4(bytes);
  // ::1 and :: are IPv4-compatible in form; they are judged as themselves.
  if (embedded && !(zero(bytes, 0, 12) && (embedded === "0.0.0.0" || embedded === "0.0.0.1"))) {
    return V4_BLOCKED.check(embedded, "ipv4")
      ? `${plain} carries ${embedded}, not a public address`
      : undefined;
  }
  return V6_BLOCKED.check(canonical(bytes), "ipv6") ? `${plain} is not a public address` : undefined;
}

const V4_LOOPBACK = blockList("ipv4", [["127.0.0.0", 8]]);
const V4_PRIVATE = blockList("ipv4", [
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
]);
const V6_PRIVATE = blockList("ipv6", [["fc00::", 7]]);

export type AddressScope = "public" | "loopback" | "private" | "other";

/** Where an IP address points: the public internet, this machine, a private network, or elsewhere. */
export function addressScope(address: string): AddressScope {
  if (!addressRefusal(address)) return "public";
  const plain = address.replace(/^\[|\]$/g, "").split("%")[0] as string;
  const bytes = isIP(plain) === 6 ? ipv6Bytes(plain) : undefined;
  // Only the IPv4-mapped form reaches the IPv4 address itself; NAT64 and 6to4 forms go through a gateway.
  const mapped = bytes && zero(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff;
  const ipv4 = isIP(plain) === 4 ? plain : mapped ? v4(bytes, 12) : undefined;
  if (ipv4) {
    if (V4_LOOPBACK.check(ipv4, "ipv4")) return "loopback";
    return V4_PRIVATE.check(ipv4, "ipv4") ? "private" : "other";
  }
  if (!bytes) return "other";
  if (bytes.every((b, i) => b === (i === 15 ? 1 : 0))) return "loopback";
  return V6_PRIVATE.check(canonical(bytes), "ipv6") ? "private" : "other";
}

/** Host names refused before any lookup. */
export function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost") || name === "";
}
