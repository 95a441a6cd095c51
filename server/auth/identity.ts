/**
 * Resolves who is calling, once per request (docs/design.md §4).
 *
 * Local mode: every request is the single local user; Authorization headers are ignored. Protected mode:
 * each credential resolver (session cookie, bearer JWT, ... added by the auth work) is asked in turn;
 * a request to a non-public route that none of them recognises gets 401 before any routing, validation
 * or body parsing happens. Public routes stay open and see `identity: undefined` when anonymous.
 *
 * Started by the desktop shell (`APP_DESKTOP_TOKEN`), every mode also requires the launch token on
 * non-public routes (desktop-token.ts), checked first.
 */
import { Elysia } from "elysia";
import type { Mode } from "../config/index.ts";
import { AppError } from "../http/errors.ts";
import { pathOf } from "../http/path.ts";
import { RoutePolicies } from "../http/route-policy.ts";
import { carriesDesktopToken } from "./desktop-token.ts";
import { type ClientInfo, ProxyTrust } from "./proxies.ts";
import { missingScope, ScopeRules } from "./scopes.ts";

export interface Identity {
  /** The owner id stored in every user-data row. */
  id: string;
  kind: "local" | "session" | "bearer" | "token";
  /** An admin of a team server (session auth): may edit policy and create invites. */
  admin?: boolean;
  /** The session this request belongs to (session auth): keys its CSRF token. */
  session?: string;
  /** How the credential came: a cookie the browser attaches by itself, or a header the caller set. */
  credential?: "cookie" | "header";
  /** The personal access token this request came with (its id): live connections re-check it. */
  token?: string;
  /** A personal access token's scopes: what it may reach (scopes.ts). Other credentials reach everything. */
  scopes?: readonly string[];
}

export const LOCAL_IDENTITY: Identity = Object.freeze({ id: "local", kind: "local" });

/** Recognises one kind of credential; undefined when the request does not carry it (or it is invalid). */
export type CredentialResolver = (
  request: Request,
  client: ClientInfo,
) => Identity | undefined | Promise<Identity | undefined>;

/**
 * The app's own surfaces that need no identity in protected mode: the UI, health, API docs and sign-in.
 * A family's route that needs none declares it (`routePolicy: { public: true }`, http/route-policy.ts).
 */
function isPublicSurface(method: string, path: string): boolean {
  if (path === "/" && method === "GET") return true;
  if (path === "/health" || path.startsWith("/health/")) return true;
  if (path === "/api/health") return true;
  if (path === "/swagger" || path.startsWith("/swagger/")) return true;
  if (path === "/app" || path.startsWith("/app/")) return method === "GET" || method === "HEAD";
  // The app icon, like the UI's files: a browser asks for it before anyone has signed in.
  if (path === "/favicon.ico") return method === "GET" || method === "HEAD";
  return path.startsWith("/api/auth/");
}

/** A lookup of whether METHOD path needs no identity: the app's surfaces, and routes declared public. */
export function publicRoutes(policies: RoutePolicies): (method: string, path: string) => boolean {
  return (method, path) => isPublicSurface(method, path) || policies.of(method, path).public === true;
}

export interface IdentityOptions {
  mode: Mode;
  resolvers?: CredentialResolver[];
  /** The desktop launch token (`APP_DESKTOP_TOKEN`), when the desktop shell started this server. */
  desktopToken?: string;
  /**
   * Which proxies' `X-Forwarded-For` and `X-Forwarded-Proto` are believed for the client's address and
   * scheme (limits key on the address); default: none, the socket's peer and the URL's scheme.
   */
  proxies?: ProxyTrust;
  /** Which scope each route needs of an access token (learned from the families by createApp). */
  scopes?: ScopeRules;
  /** The routes' declared policies (learned from the composed app by createApp): which are public. */
  policies?: RoutePolicies;
}

/**
 * The identity plugin. Every handler sees `identity` (undefined on a public route called anonymously).
 * A routes plugin that needs an owner writes `.use(ctx.identity).guard({ owner: true })`: the routes
 * after it see `owner: string`, the id every row and folder of the caller is keyed by, and in protected
 * mode a request without an identity gets 401 there even if the route were listed as public.
 */
export function identityPlugin(options: IdentityOptions) {
  const { mode, resolvers = [], desktopToken, scopes } = options;
  const isPublicRoute = publicRoutes(options.policies ?? new RoutePolicies());
  const base = new Elysia({ name: "atrium/identity" });
  if (desktopToken) {
    base.onRequest(({ request }) => {
      if (isPublicRoute(request.method, pathOf(request))) return;
      if (!carriesDesktopToken(request, desktopToken)) {
        throw new AppError("unauthorized", "This server only answers the desktop app that started it");
      }
    });
  }
  // Local mode: one constant identity and owner, attached without per-request work (the `owner` macro
  // adds no hook). The cast gives both variants the protected variant's type: `identity` possibly
  // undefined everywhere, `owner` only on routes that ask for it.
  if (mode.kind === "local") {
    return base
      .decorate({ identity: LOCAL_IDENTITY as Identity | undefined, owner: LOCAL_IDENTITY.id })
      .macro({ owner: {} }) as unknown as ReturnType<typeof protectedIdentity>;
  }
  const proxies = options.proxies ?? new ProxyTrust([]);
  return protectedIdentity(base, resolvers, proxies, scopes ?? new ScopeRules(), isPublicRoute);
}

/** The identities protected mode resolved, by request (one map: requests are unique objects). */
const resolvedByRequest = new WeakMap<Request, Identity>();

/**
 * The identity protected mode resolved for `request` in its `onRequest` hook: for a later `onRequest`
 * hook that must know the caller before the body is read (the chat family's home routing).
 */
export function resolvedIdentity(request: Request): Identity | undefined {
  return resolvedByRequest.get(request);
}

function protectedIdentity(
  base: Elysia<"">,
  resolvers: CredentialResolver[],
  proxies: ProxyTrust,
  scopes: ScopeRules,
  isPublicRoute: (method: string, path: string) => boolean,
) {
  const resolved = resolvedByRequest;
  return base
    .onRequest(async ({ request, server }) => {
      const client = proxies.client(request, server);
      const path = pathOf(request);
      for (const candidate of [request, queryTokenRequest(request)]) {
        if (!candidate) continue;
        for (const resolve of resolvers) {
          const identity = await resolve(candidate, client);
          if (identity) {
            // An access token reaches only what its scopes cover (public routes stay open to it).
            const needed =
              identity.scopes && !isPublicRoute(request.method, path) && scopes.needed(request, path);
            const refusal = needed && identity.scopes ? missingScope(identity.scopes, needed) : undefined;
            if (refusal) throw refusal;
            resolved.set(request, identity);
            return;
          }
        }
      }
      if (!isPublicRoute(request.method, path)) {
        throw new AppError("unauthorized", "Authentication required");
      }
    })
    .derive({ as: "global" }, ({ request }) => ({ identity: resolved.get(request) }))
    .macro({
      owner: {
        resolve({ identity }) {
          if (!identity) throw new AppError("unauthorized", "Authentication required");
          return { owner: identity.id };
        },
      },
    });
}

/**
 * Browsers cannot set headers on a WebSocket, so a WebSocket upgrade may carry its credential in the
 * `auth_token` query parameter (the agents contract's connection parameter). The resolvers see it as a
 * bearer token. Only upgrades: on plain HTTP a token in the URL would end up in logs and histories.
 */
function queryTokenRequest(request: Request): Request | undefined {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return undefined;
  if (request.headers.has("authorization")) return undefined;
  const token = new URL(request.url).searchParams.get("auth_token");
  if (!token) return undefined;
  const headers = new Headers(request.headers);
  headers.set("authorization", `Bearer ${token}`);
  return new Request(request.url, { method: request.method, headers });
}
