/**
 * `POST /api/webhooks/sandbox`: the sandbox provider's lifecycle events (start, stop, archive, delete).
 * Public (the provider has no user session); side effects only with a valid `x-sandbox-signature`
 * (HMAC-SHA256 of the raw body under `SANDBOX_WEBHOOK_SECRET`) on a fresh body. Anything else (no
 * secret configured, a bad signature, a replay, an unknown event or sandbox) is answered 200, logged and
 * ignored, so the provider stops retrying and a prober learns nothing. A failure while applying a valid
 * event is 500 `{error: "Webhook processing failed"}`.
 */
import { Elysia } from "elysia";
import { WebhookError, WebhookReceived } from "../../../schemas/sandbox.ts";
import type { AppContext } from "../../context.ts";
import { inspectJson } from "../../http/json-body.ts";
import { routePolicy } from "../../http/route-policy.ts";
import type { SandboxProvider } from "../../sandbox/users/provider-api.ts";
import { MAX_WEBHOOK_BYTES, ReplayGuard, signatureValid, stateOfEvent } from "../../sandbox/users/webhook.ts";

const tags = ["chat"];

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export function webhookRoutes(ctx: AppContext, { sandboxes }: { sandboxes: SandboxProvider }) {
  const registry = sandboxes.registry;
  const replays = new ReplayGuard(ctx.database);
  const received = () => json(200, { received: true });
  const ignore = (reason: string, details: Record<string, unknown> = {}) => {
    ctx.log.warn("sandbox webhook ignored", { reason, ...details });
    return received();
  };
  return new Elysia({ name: "atrium/chat/webhooks" }).use(routePolicy).post(
    "/api/webhooks/sandbox",
    async ({ body, request }) => {
      const { raw, oversized } = body as { raw: string; oversized?: true };
      if (oversized) return json(413, { error: `Webhook bodies are at most ${MAX_WEBHOOK_BYTES} bytes` });
      if (
        !signatureValid(
          raw,
          request.headers.get("x-sandbox-signature"),
          ctx.env.get("SANDBOX_WEBHOOK_SECRET"),
        )
      ) {
        return ignore("missing or invalid signature");
      }
      let payload: Record<string, unknown>;
      try {
        const parsed: unknown = JSON.parse(raw);
        if (inspectJson(parsed)) throw new Error("not a JSON object within the limits");
        payload = parsed as Record<string, unknown>;
      } catch {
        ctx.log.warn("sandbox webhook: signed body is not usable JSON");
        return json(500, { error: "Webhook processing failed" });
      }
      const replay = await replays.check(raw, payload);
      if (replay) return ignore(replay);
      const state = stateOfEvent(payload.event);
      if (!state) return ignore("not a lifecycle event", { event: String(payload.event).slice(0, 64) });
      const sandboxId = typeof payload.sandboxId === "string" ? payload.sandboxId : undefined;
      const sandbox = sandboxId ? await registry.bySandboxId(sandboxId) : undefined;
      if (!sandbox) return ignore("unknown sandbox");
      try {
        // stop, archive, delete: the sandbox's processes end now (the workspace stays).
        if (state !== "started") await sandboxes.stop(sandbox.owner);
        await registry.setState(sandbox.owner, state);
      } catch (error) {
        ctx.log.error("sandbox webhook processing failed", { error });
        return json(500, { error: "Webhook processing failed" });
      }
      ctx.log.info("sandbox webhook applied", { sandboxId, state });
      return received();
    },
    {
      // The provider has no user session: the signature is the credential.
      routePolicy: { public: true },
      // The raw bytes are what the signature covers: read them as they came, bounded. (An error thrown
      // here would become a parse error; the handler answers 413 instead.)
      parse: async ({ request }) => {
        const declared = Number(request.headers.get("content-length") ?? "0");
        if (declared > MAX_WEBHOOK_BYTES) return { raw: "", oversized: true };
        const raw = await request.text();
        return Buffer.byteLength(raw) > MAX_WEBHOOK_BYTES ? { raw: "", oversized: true } : { raw };
      },
      response: { 200: WebhookReceived, 413: WebhookError, 500: WebhookError },
      detail: {
        summary:
          "Sandbox lifecycle webhook (start, stop, archive, delete): applied only with a valid x-sandbox-signature (HMAC-SHA256 of the body)",
        tags,
      },
    },
  );
}
