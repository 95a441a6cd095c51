/**
 * Probe routes mounted under each family's prefix, so the shared conventions (error envelopes,
 * validation, identity, streams) are tested through the real app before the families have routes.
 */
import { Elysia, t } from "elysia";
import type { AppContext } from "../../server/context.ts";

export const PROBE_PATHS = {
  chat: "/api/chat/__probe",
  turns: "/api/sessions/__probe",
  search: "/search/__probe",
  agents: "/v1/__probe",
} as const;

const Body = t.Object({
  query: t.String({ minLength: 1, maxLength: 100 }),
  mode: t.Optional(t.Union([t.Literal("agent"), t.Literal("plan"), t.Literal("harness")])),
});
const Query = t.Object({ limit: t.Optional(t.Integer({ minimum: 1, maximum: 200 })) });

export function probeRoutes(ctx: AppContext) {
  const app = new Elysia({ name: "test/probes" }).use(ctx.identity);
  for (const path of Object.values(PROBE_PATHS)) {
    app
      .post(path, ({ body }) => ({ echo: body }), { body: Body })
      .get(path, ({ query, identity }) => ({ query, identity: identity ?? null }), { query: Query })
      .get(`${path}/boom`, () => {
        throw new Error("secret internal detail at /srv/atrium/keys");
      });
  }
  return app;
}

/** GET routes that answer without any credential, in every mode. */
export const PUBLIC_GET_PATHS = [
  "/",
  "/health",
  "/health/ready",
  "/api/health",
  "/swagger",
  "/swagger/json",
  "/app/",
];
