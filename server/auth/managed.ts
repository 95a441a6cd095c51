/**
 * Managed auth (`APP_MANAGED_AUTH_URL`): an external auth service signs users in; this server only
 *
 * - proxies `/api/auth/*` to it (`/api/auth/<rest>` → `<base>/<rest>`, method, body, cookies and the
 *   answer's Set-Cookie passed through; hop-by-hop headers dropped; redirects returned, not followed);
 * - verifies `Authorization: Bearer <JWT>` with `jose` against the service's JWKS
 *   (`APP_MANAGED_AUTH_JWKS_URL`, default `<base>/.well-known/jwks.json`), fetched once and cached,
 *   refetched when a token names a key it has not seen (key rotation), with the issuer the operator
 *   names (`APP_MANAGED_AUTH_ISSUER`), the audience it must name (`APP_MANAGED_AUTH_AUDIENCE`, required:
 *   without it a token the service issued for any other application would be accepted here), an
 *   expiry (`exp`, required: a token without one would be good forever) and asymmetric algorithms only
 *   (`alg: none` and HMAC tokens are refused).
 *
 * The owner id of a managed user is `managed:<sub>`, so it can never be `local` or a session-auth id.
 * jose loads with the first bearer token, not at start: a server without managed auth never needs it.
 */
import { Elysia, t } from "elysia";
import { HOP_BY_HOP as HOP_BY_HOP_HEADERS } from "../http/hop-by-hop.ts";
import { bearerOf } from "./cookies.ts";
import type { CredentialResolver } from "./identity.ts";

const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
const HOP_BY_HOP = new Set([...HOP_BY_HOP_HEADERS, "host", "content-length"]);

export interface ManagedAuthOptions {
  baseUrl: string;
  jwksUrl?: string;
  issuer?: string;
  /** The `aud` every token must carry (config refuses to start without `APP_MANAGED_AUTH_AUDIENCE`). */
  audience: string;
  /** How long after a JWKS fetch an unknown key id may trigger another (jose's default 30 s). */
  cooldownMs?: number;
}

export function managedResolver(options: ManagedAuthOptions): CredentialResolver {
  const jwksUrl = new URL(options.jwksUrl ?? `${options.baseUrl.replace(/\/+$/, "")}/.well-known/jwks.json`);
  let verifier: Promise<(token: string) => ReturnType<typeof import("jose").jwtVerify>> | undefined;
  const load = () =>
    (verifier ??= import("jose").then(({ createRemoteJWKSet, jwtVerify }) => {
      const keys = createRemoteJWKSet(jwksUrl, {
        cooldownDuration: options.cooldownMs,
        timeoutDuration: 5000,
      });
      return (token: string) =>
        jwtVerify(token, keys, {
          algorithms: ALGORITHMS,
          issuer: options.issuer,
          audience: options.audience,
          requiredClaims: ["exp", "aud"],
        });
    }));
  return async (request) => {
    const token = bearerOf(request) ?? "";
    // A JWT has three dot-separated parts; session tokens (two parts) belong to session auth.
    if (token.split(".").length !== 3) return undefined;
    try {
      const verify = await load();
      const { payload } = await verify(token);
      if (typeof payload.sub !== "string" || payload.sub === "") return undefined;
      return { id: `managed:${payload.sub}`, kind: "bearer", credential: "header" };
    } catch {
      return undefined;
    }
  };
}

/** `/api/auth/*` forwarded to the managed-auth service. */
export function managedAuthProxy(baseUrl: string, fetchImpl: typeof fetch = fetch) {
  const base = baseUrl.replace(/\/+$/, "");
  const forward = async ({ request }: { request: Request }) => {
    const url = new URL(request.url);
    const rest = url.pathname.slice("/api/auth".length);
    const headers = new Headers();
    request.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name.toLowerCase())) headers.set(name, value);
    });
    const body =
      request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
    let upstream: Response;
    try {
      upstream = await fetchImpl(`${base}${rest}${url.search}`, {
        method: request.method,
        headers,
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(15_000),
      });
    } catch {
      return Response.json({ message: "The managed auth service is unreachable" }, { status: 502 });
    }
    const answer = new Headers();
    upstream.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name.toLowerCase()) && name.toLowerCase() !== "set-cookie") answer.set(name, value);
    });
    for (const cookie of upstream.headers.getSetCookie()) answer.append("set-cookie", cookie);
    return new Response(upstream.body, { status: upstream.status, headers: answer });
  };
  const detail = { summary: "Proxied to the managed auth service (APP_MANAGED_AUTH_URL)", tags: ["chat"] };
  const response = { 200: t.Unknown({ description: "the managed auth service's answer, as it came" }) };
  return new Elysia({ name: "atrium/auth/managed" })
    .get("/api/auth/*", forward, { detail, response })
    .post("/api/auth/*", forward, { detail, response, parse: "none" });
}
