/**
 * Routes a user's per-user requests (chat, attach, their sandbox, the MCP server's sessions) to their
 * home instance (homes.ts) before anything reads the body: served here when this instance holds the
 * home, forwarded to the holder's registered address when another does, and taken over here once the
 * holder let its lease lapse. Answers to these requests carry the `atrium_home` cookie: a value per user,
 * keyed by APP_AUTH_SECRET, that the load balancer hashes (deploy/haproxy.cfg) so the user's next
 * requests reach one instance, which then holds their home. The value only routes: a caller who sends
 * another user's value lands on some instance, which still serves the caller's own identity there.
 */
import { createHmac } from "node:crypto";
import { Elysia } from "elysia";
import { cookieHeader, readCookie } from "../../auth/cookies.ts";
import type { Identity } from "../../auth/identity.ts";
import { serverKey } from "../../auth/server-keys.ts";
import { AppError } from "../../http/errors.ts";
import { pathOf } from "../../http/path.ts";
import { FORWARDED_HEADER, forwardHome } from "./forward.ts";
import type { Homes } from "./homes.ts";

/** The cookie (and header, X-Atrium-Home) the balancer hashes. */
export const HOME_COOKIE = "atrium_home";

/**
 * The paths whose work lives on the user's home instance: session files and live runs, the workspace
 * (its search projection is a SQLite file per user), the user's sandbox, and the MCP server's sessions.
 */
const HOME_PREFIXES = [
  "/api/chat",
  "/api/post-chat",
  "/api/attach",
  "/api/workspace",
  "/api/sandbox",
  "/mcp",
];

export function isHomePath(path: string): boolean {
  return HOME_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));
}

/** The routing value of `owner`: the same on every instance that shares APP_AUTH_SECRET. */
export function homeValue(secret: string | undefined, owner: string): string {
  return createHmac("sha256", serverKey(secret, "home")).update(owner).digest("base64url").slice(0, 22);
}

export interface HomeRoutingOptions {
  homes: Homes;
  /** This instance's id (the forward's marker). */
  instance: string;
  /** APP_AUTH_SECRET (the routing value's key). */
  secret: string | undefined;
  /** The caller, as the identity plugin resolved them in its own onRequest hook. */
  identityOf: (request: Request) => Identity | undefined;
}

export function homeRouting({ homes, instance, secret, identityOf }: HomeRoutingOptions) {
  return new Elysia({ name: "atrium/chat/home" })
    .onRequest(async ({ request }) => {
      if (!isHomePath(pathOf(request))) return;
      const identity = identityOf(request);
      // Anonymous: the route answers 401 (or, public, needs no home).
      if (!identity) return;
      const owner = identity.id;
      const place = await homes.place(owner);
      if (place.kind === "here") return;
      // One hop at most, and no upgrade through a forward: wait for the home to lapse, or say so.
      const forwardable = !request.headers.has(FORWARDED_HEADER) && !request.headers.has("upgrade");
      if (place.kind === "there" && forwardable) {
        const answer = await forwardHome(request, place.origin, instance);
        if (answer) return answer;
      }
      // The holder cannot be reached: once its lease lapses this instance takes the home over.
      if (forwardable && (await homes.takeOver(owner, request.signal))) return;
      throw new AppError(
        "unavailable",
        "Your chat is held by another server instance that did not answer; try again shortly",
      );
    })
    .onAfterHandle({ as: "global" }, ({ request, response, set }) => {
      if (!isHomePath(pathOf(request))) return;
      const identity = identityOf(request);
      if (!identity) return;
      const value = homeValue(secret, identity.id);
      if (readCookie(request.headers.get("cookie"), HOME_COOKIE) === value) return;
      const https = new URL(request.url).protocol === "https:";
      const cookie = cookieHeader(HOME_COOKIE, value, { maxAgeSeconds: 365 * 86400, secure: https });
      if (response instanceof Response) {
        try {
          response.headers.append("set-cookie", cookie);
        } catch {
          // A response with immutable headers goes out without it; the next one sets it.
        }
        return;
      }
      const existing = set.headers["set-cookie"];
      set.headers["set-cookie"] = existing
        ? [...(Array.isArray(existing) ? existing : [existing]), cookie]
        : cookie;
    });
}
