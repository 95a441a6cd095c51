/**
 * The local surface guard (docs/design.md §12): which browsers may talk to this server.
 *
 * A server on loopback is reachable by every web page the user opens. Two rules, each enough on its own
 * against its attacker, run on every request (HTTP and WebSocket upgrades) before identity and routing:
 *
 * - Host allow-list, against DNS rebinding (a page on `http://evil.example:8000` whose name the attacker
 *   re-points at 127.0.0.1 reads and writes as if same-origin): the `Host` must be a loopback name
 *   (`localhost`, `127.0.0.1`, `[::1]`), the bound address, with or without the bound port, or the host of
 *   a public origin the operator named. Anything else is 421.
 * - Origin check, against cross-site requests (a page on another site, or on another local port, POSTing
 *   forms or opening a WebSocket; a no-cors form POST needs no preflight): on POST, PUT, PATCH, DELETE and
 *   WebSocket upgrades, an `Origin` that is not one of this server's own origins or a public origin is
 *   403 (`Origin: null` included), and so is `Sec-Fetch-Site: cross-site`. Requests without `Origin`
 *   (curl, SDKs, other programs: not a browser page) pass.
 *
 * The orchestrator probes `GET /health` and `GET /health/ready` skip the Host rule: Docker and Kubernetes
 * address a server by its container IP, and they answer only name, version and readiness.
 */
import { Elysia } from "elysia";
import { AppError } from "./errors.ts";
import { pathOf } from "./path.ts";
import { RoutePolicies } from "./route-policy.ts";

export interface SurfaceOptions {
  /** The address the server binds (`--host`); a specific address is one of its names. */
  host: string;
  /** Canonical public origins (`--public-origin`, `APP_PUBLIC_ORIGINS`). */
  publicOrigins: readonly string[];
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];
const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const PROBES = new Set(["/health", "/health/ready"]);
const WILDCARDS = new Set(["0.0.0.0", "[::]", ""]);

/** The names and origins this server answers to, for one port. Rebuilt only when the port changes. */
interface Tables {
  port: number;
  hosts: Set<string>;
  origins: Set<string>;
  /** What a refused caller is told to open instead. */
  own: string;
}

export class SurfacePolicy {
  private readonly names: string[];
  private readonly publicHosts: string[];
  private tables: Tables | undefined;

  constructor(
    private readonly options: SurfaceOptions,
    private readonly policies: RoutePolicies = new RoutePolicies(),
  ) {
    const bound = bracketed(options.host.toLowerCase());
    this.names = [...new Set([...LOOPBACK_NAMES, ...(WILDCARDS.has(bound) ? [] : [bound])])];
    this.publicHosts = options.publicOrigins.map((origin) => new URL(origin).host);
  }

  private tablesFor(port: number): Tables {
    if (this.tables?.port === port) return this.tables;
    const hosts = new Set([...this.publicHosts]);
    const origins = new Set(this.options.publicOrigins);
    for (const name of this.names) {
      hosts.add(name);
      hosts.add(`${name}:${port}`);
      origins.add(port === 80 ? `http://${name}` : `http://${name}:${port}`);
    }
    const own = `http://127.0.0.1${port === 80 ? "" : `:${port}`}`;
    this.tables = { port, hosts, origins, own };
    return this.tables;
  }

  /** Why this request may not be served, or undefined when it may. */
  check(request: Request, boundPort: number | undefined): AppError | undefined {
    const headers = request.headers;
    const authority = headers.get("host") ?? authorityOf(request.url);
    // Handled in-process (tests) there is no bound port: the request's own port stands in for it.
    const tables = this.tablesFor(boundPort ?? portOf(authority));
    const method = request.method;
    // Browsers send host names in lower case: the second lookup is for other clients.
    if (
      !tables.hosts.has(authority) &&
      !tables.hosts.has(authority.toLowerCase()) &&
      !isProbe(method, request)
    ) {
      return misdirected(authority, tables.own);
    }
    if (!STATE_CHANGING.has(method) && headers.get("upgrade")?.toLowerCase() !== "websocket") return;
    // A route whose own credential authorizes it, not the page's origin (a signed URL a previewed page in
    // an opaque origin posts to), declares `anyOrigin` (route-policy.ts).
    if (this.policies.of(method, pathOf(request)).anyOrigin) return;
    if (headers.get("sec-fetch-site") === "cross-site") {
      return forbidden("a page of another site sent it (Sec-Fetch-Site: cross-site)");
    }
    const origin = headers.get("origin");
    if (origin !== null && !tables.origins.has(origin.toLowerCase())) {
      return forbidden(`its Origin '${clip(origin)}' is not this server's own`);
    }
  }
}

/**
 * Mount before identity: a refused request learns nothing about routes, identity or readiness.
 * `boundPort` reads the listening port (undefined while handled in process), kept once known. Elysia's
 * `server` in the hook's context would do too, but asking for it made every request ~1.5 us slower.
 */
export function surfaceGuard(
  options: SurfaceOptions,
  policies: RoutePolicies,
  boundPort: () => number | undefined,
) {
  const policy = new SurfacePolicy(options, policies);
  let port: number | undefined;
  return new Elysia({ name: "atrium/surface" }).onRequest(({ request }) => {
    port ??= boundPort();
    const refusal = policy.check(request, port);
    if (refusal) throw refusal;
  });
}

function misdirected(authority: string, own: string): AppError {
  return new AppError(
    "forbidden",
    `This server does not answer to the host name '${clip(authority)}' (a DNS-rebinding guard). Open ${own} instead, or start the server with --public-origin <URL> (or APP_PUBLIC_ORIGINS) naming the origin you use.`,
    { status: 421, code: "misdirected_request" },
  );
}

function forbidden(reason: string): AppError {
  return new AppError(
    "forbidden",
    `Refused: ${reason}. Web pages of other origins cannot change data here; programs that send no Origin header (curl, SDKs) can.`,
    { code: "cross_origin_request" },
  );
}

function isProbe(method: string, request: Request): boolean {
  return (method === "GET" || method === "HEAD") && PROBES.has(pathOf(request));
}

/** `host[:port]` of an absolute URL, without parsing the rest of it. */
function authorityOf(url: string): string {
  const start = url.indexOf("//") + 2;
  const end = url.indexOf("/", start);
  return url.slice(start, end < 0 ? undefined : end);
}

/** The port an authority names, else the http default. */
function portOf(authority: string): number {
  const colon = authority.lastIndexOf(":");
  if (colon < 0 || authority.endsWith("]")) return 80;
  const port = Number(authority.slice(colon + 1));
  return Number.isInteger(port) ? port : 80;
}

function bracketed(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** Caller-chosen text echoed in a message: bounded. */
function clip(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
