/**
 * The CSRF flow shared by the chat family's protected writes (workspace reindex, sandbox settings):
 * one guard per route set built from the app's mode and secret, and the GET that hands out the token
 * (also set as the `app_csrf` cookie: HttpOnly, SameSite=Strict, Secure behind HTTPS).
 */
import { cookieHeader } from "../../auth/cookies.ts";
import type { Identity } from "../../auth/identity.ts";
import type { AppContext } from "../../context.ts";
import { CSRF_COOKIE, ReindexGuard } from "../workspace/csrf.ts";

type Peer = { requestIP(request: Request): { address: string } | null } | null;

export function csrfGuard(ctx: AppContext): ReindexGuard {
  return new ReindexGuard({
    protectedMode: ctx.config.mode.kind === "protected",
    csrfToken: ctx.auth ? (key) => ctx.auth?.csrfToken(key) as string : undefined,
    publicOrigins: ctx.config.publicOrigins,
    limits: ctx.limits,
  });
}

/** The caller's token, set as the cookie on the answer too. */
export function issueCsrfToken(
  ctx: AppContext,
  guard: ReindexGuard,
  call: {
    identity: Identity | undefined;
    request: Request;
    server: unknown;
    set: { headers: Record<string, unknown> };
  },
): string {
  const csrfToken = guard.token(call.identity);
  const peer = (call.server as Peer)?.requestIP(call.request)?.address;
  call.set.headers["set-cookie"] = cookieHeader(CSRF_COOKIE, csrfToken, {
    maxAgeSeconds: 12 * 60 * 60,
    secure: ctx.proxies.clientOf(call.request, peer).https,
  });
  call.set.headers["cache-control"] = "no-store";
  return csrfToken;
}
