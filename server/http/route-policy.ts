/**
 * Per-route policy, declared on the route and read by the shared layers (docs/design.md §4, §8, §12).
 *
 * The shared layers (identity, the surface guard, body types, the error handler) run on every request,
 * most of them before routing. What a route needs of them that differs from the default is declared on
 * the route itself with the `routePolicy` macro:
 *
 *     .use(routePolicy).all("/x/:token/*", handler, { routePolicy: { public: true, bodies: "any" } })
 *
 * and createApp teaches the composed app's routes to one `RoutePolicies` table (`learn(app.routes)`),
 * which the shared layers ask by method and path. No shared file names a family's path
 * (tests/architecture.test.ts checks it). A route that takes multipart uploads says so with Elysia's own
 * `type: "multipart/form-data"`, which the table reads too.
 */
import { type AnyElysia, Elysia } from "elysia";
import type { ErrorEnvelope } from "./errors.ts";

/** What a route may declare; every key left out keeps the default. */
export interface RoutePolicy {
  /**
   * Needs no identity in protected mode: the route checks its own credential (a signed URL, a webhook
   * signature). Default: a caller without an identity gets 401 before routing.
   */
  public?: true;
  /**
   * "any": the body is forwarded as it came (a previewed page's forms and uploads), so neither its type
   * nor its JSON is checked here. Default: JSON only (multipart too where `type` says so).
   */
  bodies?: "any";
  /**
   * true: a state-changing request from another origin (`Origin: null` included) passes the surface
   * guard, because the route's own credential authorizes it, not the page's origin. Default: same-origin.
   */
  anyOrigin?: true;
  /** The error envelope of this route when it is not its family's. */
  envelope?: ErrorEnvelope;
}

/** The body types a route takes. */
export type BodyKinds = "json" | "json+multipart" | "any";

const MULTIPART = "multipart/form-data";

/** The `routePolicy` option every routes plugin may `.use()`; it adds no hook, only the declaration. */
export const routePolicy = new Elysia({ name: "atrium/route-policy" }).macro({
  routePolicy: (_declared: RoutePolicy) => ({}),
});

interface Declared {
  method: string;
  segments: string[];
  policy: RoutePolicy;
  multipart: boolean;
}

/**
 * The policies of one app's routes: empty until createApp teaches it the composed routes. Lookups run
 * on every request; only routes that declare something are kept, so the common path scans a handful.
 */
export class RoutePolicies {
  private declared: Declared[] = [];

  learn(routes: AnyElysia["routes"]): void {
    this.declared = [];
    for (const route of routes) {
      const hooks = route.hooks as { type?: string; routePolicy?: RoutePolicy };
      const multipart = hooks.type === MULTIPART;
      if (!hooks.routePolicy && !multipart) continue;
      const policy = hooks.routePolicy ?? {};
      this.declared.push({ method: route.method, segments: route.path.split("/"), policy, multipart });
    }
  }

  /** The declaration of the route METHOD path reaches, if it declared anything. */
  private find(method: string, path: string): Declared | undefined {
    const segments = path.split("/");
    return this.declared.find((d) => methodMatches(d.method, method) && pathMatches(d.segments, segments));
  }

  /** The route's policy ({} when it declared none). */
  of(method: string, path: string): RoutePolicy {
    return this.find(method, path)?.policy ?? {};
  }

  /** The body types the route takes. */
  bodies(method: string, path: string): BodyKinds {
    const found = this.find(method, path);
    if (found?.policy.bodies === "any") return "any";
    return found?.multipart ? "json+multipart" : "json";
  }
}

/** ALL answers every method; a WebSocket route is reached by its upgrade, a GET. */
function methodMatches(declared: string, method: string): boolean {
  return declared === method || declared === "ALL" || (declared === "WS" && method === "GET");
}

/** `:param` matches one non-empty segment; a trailing `*` matches the rest, empty included. */
function pathMatches(pattern: string[], segments: string[]): boolean {
  const wildcard = pattern[pattern.length - 1] === "*";
  const fixed = wildcard ? pattern.length - 1 : pattern.length;
  if (wildcard ? segments.length < fixed : segments.length !== fixed) return false;
  for (let i = 0; i < fixed; i++) {
    const s = pattern[i] as string;
    const got = segments[i] as string;
    if (s !== got && !(s.startsWith(":") && got !== "")) return false;
  }
  return true;
}
