/**
 * The credential resolver of session auth: a session token as `Authorization: Bearer <id>.<secret>`
 * (terminal clients, a WebSocket's `auth_token`) or as the session cookie (browsers).
 *
 * A cookie is sent by the browser on its own, so a cookie-authenticated request that changes state must
 * also show it comes from one of this server's pages: an `Origin` header (the surface guard has already
 * refused any foreign one). Browsers send Origin on every POST, PUT, PATCH, DELETE and WebSocket
 * upgrade; a request that lacks it with a cookie is not a page of ours. Bearer callers need no such
 * proof: nothing attaches a header for them. The cookie read is the one named for the client's
 * scheme (`__Host-` over HTTPS: cookies.ts).
 */
import { AppError } from "../http/errors.ts";
import type { BearerGuesses } from "./bearer-guesses.ts";
import { bearerOf, readCookie, sessionCookieName } from "./cookies.ts";
import type { CredentialResolver, Identity } from "./identity.ts";
import type { SessionAuth, Validated } from "./session-auth.ts";
import { TOKEN_PATTERN } from "./tokens.ts";

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function sessionResolver(auth: SessionAuth, guesses?: BearerGuesses): CredentialResolver {
  return async (request, client) => {
    const bearer = bearerOf(request);
    if (bearer && TOKEN_PATTERN.test(bearer)) {
      // A bad session token as a bearer counts against the address's sign-in limit (bearer-guesses.ts).
      const found = guesses
        ? await guesses.check(client.address, () => auth.validate(bearer))
        : await auth.validate(bearer);
      return found ? identityOf(found, "header") : undefined;
    }
    const cookie = readCookie(request.headers.get("cookie"), sessionCookieName(client.https));
    if (!cookie) return undefined;
    const found = await auth.validate(cookie);
    if (!found) return undefined;
    const upgrade = request.headers.get("upgrade")?.toLowerCase() === "websocket";
    if ((STATE_CHANGING.has(request.method) || upgrade) && !request.headers.has("origin")) {
      throw new AppError(
        "forbidden",
        "A request authenticated by the session cookie that changes data must carry an Origin header; programs should send Authorization: Bearer <token> instead",
        { code: "origin_required" },
      );
    }
    return identityOf(found, "cookie");
  };
}

function identityOf(found: Validated, credential: "cookie" | "header"): Identity {
  return {
    id: found.user.id,
    kind: "session",
    admin: found.user.admin,
    session: found.session.id,
    credential,
  };
}
