/**
 * `/api/auth/tokens`: a signed-in user creates, lists and revokes their personal access tokens
 * (access-tokens.ts). Mounted in protected mode, whatever signs people in (session auth or a managed
 * service: these routes are answered here, not proxied). `/api/auth/*` is public (docs/design.md §4), so
 * each route checks its caller: 401 without one, 403 for a caller who came with an access token (a token
 * never manages tokens, so a narrow one cannot mint a wider one).
 */
import { Elysia } from "elysia";
import { CreatedToken, NewTokenBody, SignedOut, TokenIdParams, TokenList } from "../../schemas/auth.ts";
import { ChatError } from "../../schemas/common.ts";
import { AppError } from "../http/errors.ts";
import type { AccessTokens } from "./access-tokens.ts";
import type { Identity, identityPlugin } from "./identity.ts";

const tags = ["chat"];

/** A token never manages tokens (the `owner` guard has already refused a caller without a credential). */
function sessionOnly(caller: Identity | undefined): void {
  if (caller?.kind === "token")
    throw new AppError(
      "forbidden",
      "Access tokens are managed by a signed-in user (the web UI, or `atrium token` after `atrium login`), not with a token",
      { code: "session_required" },
    );
}

export function tokenRoutes(tokens: AccessTokens, identity: ReturnType<typeof identityPlugin>) {
  return new Elysia({ name: "atrium/auth/tokens" })
    .use(identity)
    .guard({ owner: true })
    .post(
      "/api/auth/tokens",
      ({ body, owner, identity: caller, set }) => {
        sessionOnly(caller);
        set.headers["cache-control"] = "no-store";
        return tokens.create(owner, body);
      },
      {
        body: NewTokenBody,
        response: { 200: CreatedToken, 400: ChatError, 401: ChatError, 403: ChatError },
        detail: {
          summary:
            "Create a personal access token: the `token` is in this answer only (send it as `Authorization: Bearer`)",
          tags,
        },
      },
    )
    .get(
      "/api/auth/tokens",
      async ({ owner, identity: caller }) => {
        sessionOnly(caller);
        return { tokens: await tokens.list(owner) };
      },
      {
        response: { 200: TokenList, 401: ChatError, 403: ChatError },
        detail: { summary: "The caller's access tokens (never the tokens themselves)", tags },
      },
    )
    .delete(
      "/api/auth/tokens/:id",
      async ({ params, owner, identity: caller }) => {
        sessionOnly(caller);
        await tokens.revoke(owner, params.id);
        return { success: true };
      },
      {
        params: TokenIdParams,
        response: { 200: SignedOut, 401: ChatError, 403: ChatError, 404: ChatError },
        detail: {
          summary: "Revoke an access token: refused at once, and connections open on it close",
          tags,
        },
      },
    );
}
