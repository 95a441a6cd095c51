/**
 * `/api/auth/*` for session auth (mounted when `APP_AUTH_SECRET` is set): sign-up, sign-in, sign-out,
 * the current session (both the Better Auth path the reference client calls and the reference client's own), and
 * invites for admins. Thin: the work is in session-auth.ts. These paths are public (docs/design.md §4),
 * so each route decides itself what it needs.
 */
import { Elysia } from "elysia";
import {
  CurrentSession,
  Invite,
  InviteBody,
  SignedIn,
  SignedOut,
  SignedUp,
  SignInBody,
  SignUpBody,
} from "../../schemas/auth.ts";
import { ChatError } from "../../schemas/common.ts";
import { AppError } from "../http/errors.ts";
import { bearerOf, cookieHeader, readCookie, sessionCookieName } from "./cookies.ts";
import type { identityPlugin } from "./identity.ts";
import type { ProxyTrust } from "./proxies.ts";
import { SESSION_LIFETIME_MS, type SessionAuth, type Signed, type Validated } from "./session-auth.ts";

const tags = ["chat"];

export interface AuthRouteDeps {
  auth: SessionAuth;
  identity: ReturnType<typeof identityPlugin>;
  proxies: ProxyTrust;
}

export function authRoutes({ auth, identity, proxies }: AuthRouteDeps) {
  const client = (request: Request, server: unknown) => proxies.client(request, server);
  const setSession = (
    set: { headers: Record<string, unknown> },
    secure: boolean,
    token: string,
    maxAgeMs: number,
  ) => {
    set.headers["set-cookie"] = cookieHeader(sessionCookieName(secure), token, {
      maxAgeSeconds: Math.max(0, Math.floor(maxAgeMs / 1000)),
      secure,
    });
    set.headers["cache-control"] = "no-store";
  };
  const signedIn = (set: { headers: Record<string, unknown> }, secure: boolean, signed: Signed) =>
    setSession(set, secure, signed.token, SESSION_LIFETIME_MS);
  const presented = (request: Request, server: unknown) =>
    bearerOf(request) ??
    readCookie(request.headers.get("cookie"), sessionCookieName(client(request, server).https));

  const current = async ({
    request,
    server,
    set,
  }: {
    request: Request;
    server: unknown;
    set: { headers: Record<string, unknown> };
  }) => {
    const token = presented(request, server);
    const found = token ? await auth.validate(token) : undefined;
    set.headers["cache-control"] = "no-store";
    // JSON `null` (what the reference client expects when signed out); Elysia sends nothing for a bare null.
    if (!found || !token) {
      // A Response is sent as it is; the cast keeps the handler's type the body's (an async handler's
      // Promise<Response | body> is not one Elysia's types accept).
      return new Response("null", {
        headers: { "content-type": "application/json", "cache-control": "no-store" },
      }) as unknown as Pick<Validated, "session" | "user">;
    }
    // A browser's cookie follows the sliding expiry: set again with the session's new lifetime.
    if (!bearerOf(request)) {
      setSession(set, client(request, server).https, token, Date.parse(found.session.expiresAt) - Date.now());
    }
    const { session, user } = found;
    return { session, user };
  };

  return new Elysia({ name: "atrium/auth" })
    .use(identity)
    .post(
      "/api/auth/sign-up/email",
      async ({ body, request, server, set }) => {
        const signed = await auth.signUp(body);
        signedIn(set, client(request, server).https, signed);
        return { token: signed.token, user: signed.user };
      },
      {
        body: SignUpBody,
        response: { 200: SignedUp, 400: ChatError, 403: ChatError },
        detail: {
          summary: "Create an account and sign in (APP_AUTH_SIGNUP: open, invite with inviteCode, or closed)",
          tags,
        },
      },
    )
    .post(
      "/api/auth/sign-in/email",
      async ({ body, request, server, set }) => {
        const who = client(request, server);
        const signed = await auth.signIn(body, who.address);
        signedIn(set, who.https, signed);
        return { redirect: false, token: signed.token, user: signed.user };
      },
      {
        body: SignInBody,
        response: { 200: SignedIn, 400: ChatError, 401: ChatError, 429: ChatError },
        detail: {
          summary: "Sign in: sets the session cookie and returns the token (usable as a bearer token)",
          tags,
        },
      },
    )
    .post(
      "/api/auth/sign-out",
      async ({ request, server, set }) => {
        await auth.signOut(presented(request, server));
        setSession(set, client(request, server).https, "", 0);
        return { success: true };
      },
      {
        response: { 200: SignedOut },
        detail: { summary: "Sign out: ends the session and clears the cookie", tags },
      },
    )
    .get("/api/auth/get-session", current, {
      response: { 200: CurrentSession },
      detail: { summary: "The current session and user, or null", tags },
    })
    .get("/api/auth/session", current, {
      response: { 200: CurrentSession },
      detail: { summary: "The current session and user, or null (same as get-session)", tags },
    })
    .post(
      "/api/auth/invites",
      ({ body, identity: caller }) => {
        if (!caller) throw new AppError("unauthorized", "Authentication required");
        if (!caller.admin) throw new AppError("forbidden", "Only an admin can create invites");
        return auth.createInvite(caller.id, { admin: body.admin });
      },
      {
        body: InviteBody,
        response: { 200: Invite, 401: ChatError, 403: ChatError },
        detail: { summary: "Create a single-use invite code (admins only)", tags },
      },
    );
}
