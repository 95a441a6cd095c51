/**
 * Session auth (`/api/auth/*`): bodies and answers. The paths and shapes follow the Better Auth routes
 * the reference client calls (sign-up/email, sign-in/email, sign-out, get-session), plus invites.
 * Schemas only: no runtime code.
 */
import { t } from "elysia";
import { Integer } from "./common.ts";

export const SignUpBody = t.Object({
  email: t.String({ maxLength: 254 }),
  password: t.String({ maxLength: 256 }),
  name: t.Optional(t.String({ maxLength: 200 })),
  inviteCode: t.Optional(t.String({ maxLength: 200, description: "required when APP_AUTH_SIGNUP=invite" })),
  image: t.Optional(t.String({ maxLength: 2048, description: "accepted for client compatibility, ignored" })),
  callbackURL: t.Optional(
    t.String({ maxLength: 2048, description: "accepted for client compatibility, ignored" }),
  ),
});

export const SignInBody = t.Object({
  email: t.String({ maxLength: 254 }),
  password: t.String({ maxLength: 256 }),
  rememberMe: t.Optional(t.Boolean()),
  callbackURL: t.Optional(t.String({ maxLength: 2048 })),
});

export const AuthUser = t.Object({
  id: t.String(),
  name: t.String(),
  email: t.String(),
  emailVerified: t.Boolean(),
  admin: t.Boolean(),
  createdAt: t.String(),
  updatedAt: t.String(),
});

export const AuthSession = t.Object({
  id: t.String(),
  userId: t.String(),
  createdAt: t.String(),
  expiresAt: t.String(),
});

export const SignedUp = t.Object({
  token: t.String({ description: "session token `<id>.<secret>`: also usable as `Authorization: Bearer`" }),
  user: AuthUser,
});

export const SignedIn = t.Object({
  redirect: t.Boolean(),
  token: t.String({ description: "session token `<id>.<secret>`: also usable as `Authorization: Bearer`" }),
  user: AuthUser,
});

export const SignedOut = t.Object({ success: t.Boolean() });

export const CurrentSession = t.Union([t.Object({ session: AuthSession, user: AuthUser }), t.Null()], {
  description: "the caller's session and user, or null when signed out",
});

export const InviteBody = t.Object({
  admin: t.Optional(t.Boolean({ description: "the account created with it is an admin" })),
});

export const Invite = t.Object({
  code: t.String({ description: "single use; shown once" }),
  expiresAt: t.String(),
  admin: t.Boolean(),
});

/** Personal access token scopes (server/auth/scopes.ts): a family, its `:read` variant, or `mcp`. */
export const TokenScope = t.Union(
  [
    t.Literal("chat"),
    t.Literal("chat:read"),
    t.Literal("turns"),
    t.Literal("turns:read"),
    t.Literal("search"),
    t.Literal("search:read"),
    t.Literal("agents"),
    t.Literal("agents:read"),
    t.Literal("mcp"),
  ],
  {
    description:
      "a family (`chat`, `turns`, `search`, `agents`: every route of its paths), its `:read` variant (GET and HEAD only, no WebSocket), or `mcp` (Atrium's MCP server at /mcp)",
  },
);

export const NewTokenBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 100, description: "what the token is for (shown in lists)" }),
  scopes: t.Array(TokenScope, { minItems: 1, maxItems: 9, uniqueItems: true }),
  expiresInDays: t.Optional(
    Integer({ minimum: 1, maximum: 365, description: "omitted: the token does not expire" }),
  ),
});

export const AccessToken = t.Object({
  id: t.String(),
  name: t.String(),
  scopes: t.Array(TokenScope),
  createdAt: t.String(),
  lastUsedAt: t.Union([t.String(), t.Null()], { description: "within a minute; null: never used" }),
  expiresAt: t.Union([t.String(), t.Null()], { description: "null: does not expire" }),
  expired: t.Boolean(),
});

export const CreatedToken = t.Composite([
  t.Object({
    token: t.String({
      description:
        "`atr_<id>_<secret>`: shown this once, only its hash is kept. Send as `Authorization: Bearer`",
    }),
  }),
  AccessToken,
]);

export const TokenList = t.Object({ tokens: t.Array(AccessToken) });

export const TokenIdParams = t.Object({ id: t.String({ maxLength: 100 }) });
