/**
 * The protected writes' guard (workspace reindex, sandbox settings) on protected deployments: a CSRF
 * check on every such write, and a rate limit on reindexing. A cookie-authenticated caller first GETs a CSRF
 * token (also set as the `app_csrf` cookie: HttpOnly, SameSite=Strict), then POSTs with it in
 * `x-app-csrf-token` and a same-origin `Origin` (or `Referer`). The token is an HMAC of the caller's
 * session under the server secret (auth/server-keys.ts: `APP_AUTH_SECRET`, so every instance accepts
 * the token another issued): it cannot be forged, and another user's (or another session's) token
 * fails. Callers authenticated by a valid header credential (a Bearer token) skip the check: a page
 * cannot make a browser add one. Any other `Authorization` header (with the cookie doing the
 * authenticating) does not. Five reindexes per minute per user, counted in the database; a refused
 * attempt is not counted.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { readCookie } from "../../auth/cookies.ts";
import type { Identity } from "../../auth/identity.ts";
import type { LimitStore } from "../../auth/limit-store.ts";
import { SlidingWindow } from "../../auth/rate-limit.ts";
import { serverKey } from "../../auth/server-keys.ts";
import { AppError } from "../../http/errors.ts";

export const CSRF_COOKIE = "app_csrf";
export const CSRF_HEADER = "x-app-csrf-token";
const REINDEX_LIMIT = 5;
const REINDEX_WINDOW_MS = 60_000;

export interface ProtectedWriteGuardOptions {
  protectedMode: boolean;
  /** `APP_AUTH_SECRET`, which keys the tokens (undefined: a key of this process, one instance only). */
  secret: string | undefined;
  publicOrigins: readonly string[];
  /** Where the reindex window is counted (the app's attempt limits). */
  limits: LimitStore;
}

export class ProtectedWriteGuard {
  private readonly window: SlidingWindow;
  private readonly key: Buffer;

  constructor(private readonly options: ProtectedWriteGuardOptions) {
    this.window = new SlidingWindow("reindex", REINDEX_LIMIT, REINDEX_WINDOW_MS, options.limits);
    this.key = serverKey(options.secret, "csrf");
  }

  get enforced(): boolean {
    return this.options.protectedMode;
  }

  /** The caller's CSRF token: bound to their session (or, without one, to their identity). */
  token(identity: Identity | undefined): string {
    const key = identity?.session ?? `owner:${identity?.id ?? "local"}`;
    return createHmac("sha256", this.key).update(`csrf:${key}`).digest("base64url");
  }

  /** Throws 403 unless the request passes the CSRF check (only enforced in protected mode). */
  checkCsrf(request: Request, identity: Identity | undefined): void {
    if (!this.enforced || identity?.credential === "header") return;
    const invalid = () => new AppError("forbidden", "Invalid CSRF protection");
    if (!this.sameOrigin(request)) throw invalid();
    const header = request.headers.get(CSRF_HEADER) ?? "";
    const cookie = readCookie(request.headers.get("cookie"), CSRF_COOKIE) ?? "";
    const expected = this.token(identity);
    if (!header || !equal(header, cookie) || !equal(header, expected)) throw invalid();
  }

  /** Throws 429 when the owner used up the window (only in protected mode); else counts this one. */
  async count(owner: string): Promise<void> {
    if (!this.enforced) return;
    if (!(await this.window.reserve(owner)).ok) {
      throw new AppError("rate_limited", "Workspace reindex rate limit exceeded", {
        headers: { "retry-after": "60" },
      });
    }
  }

  private sameOrigin(request: Request): boolean {
    const origin = request.headers.get("origin") ?? originOf(request.headers.get("referer"));
    if (!origin || origin === "null") return false;
    const host = request.headers.get("host");
    const own = new Set([new URL(request.url).origin, ...this.options.publicOrigins]);
    if (host) {
      own.add(`http://${host}`);
      own.add(`https://${host}`);
    }
    return own.has(origin.toLowerCase());
  }
}

function originOf(referer: string | null): string | undefined {
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
