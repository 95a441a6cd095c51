/**
 * `/api/sandbox/settings`: a user's own sandbox provider key ("bring your own key"). With the remote
 * provider, a stored key puts that user's sandbox in their own provider account (it wins over the
 * server's `SANDBOX_API_KEY` for them); with `APP_SANDBOX_PROVIDER=remote` and no server key, it is what
 * enables a sandbox at all. The key is kept with the user's model provider keys and never read back.
 * Writes are CSRF-protected like the workspace reindex (cookie callers; bearer callers skip it).
 */
import { Elysia } from "elysia";
import { ChatError } from "../../../schemas/common.ts";
import {
  SandboxError,
  SandboxSettings,
  SandboxSettingsSaved,
  SandboxSettingsUpdate,
} from "../../../schemas/sandbox.ts";
import type { AppContext } from "../../context.ts";
import type { SandboxProvider } from "../../sandbox/users/provider-api.ts";
import type { SandboxKeyService } from "../services/sandbox-keys.ts";
import type { ProtectedWriteGuard } from "../workspace/csrf.ts";
import { issueCsrfToken } from "./csrf-token.ts";

const tags = ["chat"];

export function sandboxSettingsRoutes(
  ctx: AppContext,
  services: { sandboxes: SandboxProvider; sandboxKeys: SandboxKeyService; writeGuard: ProtectedWriteGuard },
) {
  const { sandboxes, sandboxKeys: keys, writeGuard: guard } = services;
  return new Elysia({ name: "atrium/chat/sandbox-settings" })
    .use(ctx.identity)
    .guard({ owner: true })
    .get(
      "/api/sandbox/settings",
      ({ owner, identity, request, server, set }) => {
        const csrfToken = issueCsrfToken(ctx, guard, { identity, request, server, set });
        return {
          provider: sandboxes.availability().available ? sandboxes.name : "none",
          sandboxApiKeyConfigured: keys.configured(owner),
          serverKeyConfigured: Boolean(ctx.env.get("SANDBOX_API_KEY")),
          csrfToken,
        };
      },
      {
        response: { 200: SandboxSettings },
        detail: {
          summary: "Your sandbox settings: the provider, whether you stored a key, a CSRF token",
          tags,
        },
      },
    )
    .post(
      "/api/sandbox/settings",
      async ({ owner, identity, request, body, status }) => {
        guard.checkCsrf(request, identity);
        if (sandboxes.name !== "remote")
          return status(409, {
            error: "This server's sandboxes are local (the bubblewrap jail): they need no provider key",
          });
        await keys.save(owner, body.sandboxApiKey);
        return { success: true as const, sandboxApiKeyConfigured: keys.configured(owner) };
      },
      {
        body: SandboxSettingsUpdate,
        response: { 200: SandboxSettingsSaved, 403: ChatError, 409: SandboxError },
        detail: {
          summary: "Store or clear your own sandbox provider key (remote provider; x-app-csrf-token)",
          tags,
        },
      },
    );
}
