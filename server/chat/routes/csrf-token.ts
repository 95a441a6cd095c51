/**
 * The CSRF flow shared by the chat family's protected writes (workspace reindex, sandbox settings): the
 * GET that hands out the token of the family's one ProtectedWriteGuard (also set as the `app_csrf`
 * cookie: HttpOnly, SameSite=Strict, Secure behind HTTPS).
 */
import { cookieHeader } from "../../auth/cookies.ts";
import type { Identity } from "../../auth/identity.ts";
import type { AppContext } from "../../context.ts";
import { CSRF_COOKIE, type ProtectedWriteGuard } from "../workspace/csrf.ts";

/** The caller's token, set as the cookie on the answer too. */
export function issueCsrfToken(
  ctx: AppContext,
  guard: ProtectedWriteGuard,
  call: {
    identity: Identity | undefined;
    request: Request;
    server: unknown;
    set: { headers: Record<string, unknown> };
  },
): string {
  const csrfToken = guard.token(call.identity);
  call.set.headers["set-cookie"] = cookieHeader(CSRF_COOKIE, csrfToken, {
    maxAgeSeconds: 12 * 60 * 60,
    secure: ctx.proxies.client(call.request, call.server).https,
  });
  call.set.headers["cache-control"] = "no-store";
  return csrfToken;
}
