/**
 * GET/PATCH /api/settings: only for a loopback client, in every mode and whatever address the server is
 * bound to. The client address comes from the socket (never from a header); a request without one (no
 * socket) is refused as well. In protected mode the caller must also be an admin (a team server's
 * members do not edit its policy, whatever address they come from).
 */
import { Elysia } from "elysia";
import { TurnsError } from "../../../schemas/common.ts";
import { SettingsPatch, SettingsView } from "../../../schemas/turns.ts";
import type { AppContext } from "../../context.ts";
import { isLoopback, peerAddress } from "../../http/client.ts";
import { AppError } from "../../http/errors.ts";
import type { TurnSettingsService } from "../services/settings.ts";

const tags = ["turns"];

export function settingsRoutes(ctx: AppContext, { settings }: { settings: TurnSettingsService }) {
  const protectedMode = ctx.config.mode.kind === "protected";
  const loopbackOnly = ({
    request,
    server,
    identity,
  }: {
    request: Request;
    server: unknown;
    identity: { admin?: boolean } | undefined;
  }) => {
    if (protectedMode && identity?.admin !== true) {
      throw new AppError("forbidden", "Only an admin of this server can read or change its policy", {
        code: "admin_required",
      });
    }
    // The socket's own peer, never a forwarded address: a proxy on this machine does not make its
    // clients local.
    if (!isLoopback(peerAddress(server, request))) {
      throw new AppError("forbidden", "Settings are only available to a client on this machine (loopback)", {
        code: "loopback_required",
      });
    }
  };
  return new Elysia({ name: "atrium/turns/settings" })
    .use(ctx.identity)
    .get("/api/settings", () => settings.read(), {
      transform: loopbackOnly,
      response: { 200: SettingsView, 403: TurnsError },
      detail: { summary: "Non-secret policy and its revision (loopback clients only)", tags },
    })
    .patch("/api/settings", ({ body }) => settings.patch(body), {
      // Before validation: a remote client learns nothing, not even what a valid body looks like.
      transform: loopbackOnly,
      body: SettingsPatch,
      response: { 200: SettingsView, 403: TurnsError, 409: TurnsError, 422: TurnsError },
      detail: {
        summary:
          "Revision-checked policy update (batch with unset, single field, or profile selection); applies after restart",
        tags,
      },
    });
}
