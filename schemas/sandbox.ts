/** The per-user sandbox routes: preview URLs and the provider's lifecycle webhook. Schemas only. */
import { t } from "elysia";
import { Integer } from "./common.ts";

export const WebhookReceived = t.Object({ received: t.Literal(true) });

/** The sandbox routes' error body is `{error}` (the chat contract's texts), not chat's `{message}`. */
export const WebhookError = t.Object({ error: t.String() }, { description: "sandbox route error body" });
export const SandboxError = WebhookError;

export const PreviewQuery = t.Object({
  port: t.Optional(t.String({ maxLength: 16, description: "integer 1..65535 (default 3000)" })),
});

export const Preview = t.Object({
  url: t.String({ description: "short-lived signed URL proxying to that port inside your sandbox" }),
  port: Integer(),
  expiresAt: t.String(),
});

export const SandboxSettings = t.Object({
  provider: t.String({ description: "where this server's sandboxes run: local, remote or none" }),
  sandboxApiKeyConfigured: t.Boolean({ description: "whether you stored your own provider key" }),
  serverKeyConfigured: t.Boolean({ description: "whether the server has a provider key for everyone" }),
  csrfToken: t.String({ description: "send it as x-app-csrf-token with POST (cookie callers)" }),
});

export const SandboxSettingsUpdate = t.Object(
  {
    sandboxApiKey: t.Union([t.String({ minLength: 1, maxLength: 512 }), t.Null()], {
      description: "your own provider key (your sandbox then lives in your provider account); null clears it",
    }),
  },
  { additionalProperties: false },
);

export const SandboxSettingsSaved = t.Object({
  success: t.Literal(true),
  sandboxApiKeyConfigured: t.Boolean(),
});
