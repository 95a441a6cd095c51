/**
 * Liveness, readiness and the root probe (docs/design.md §2 and 3). `/health` answers from the first
 * moment the process serves HTTP; `/health/ready` is 503 `service_not_ready` until composition finishes
 * (and again while draining), then proves a database round trip. Served beside the families, each on a
 * path a family declares (its error envelope applies): `/health*` the turn service's, `/api/health`
 * chat's, `GET /` search's.
 */
import { Elysia } from "elysia";
import Negotiator from "negotiator";
import { ApiHealth, Health, Ready, Redirect, RootProbe, TurnsError } from "../schemas/common.ts";
import type { AppContext } from "./context.ts";
import { AppError } from "./http/errors.ts";
import { sandboxReport } from "./sandbox/isolation.ts";
import { APP_NAME, APP_VERSION } from "./version.ts";

const health = { name: APP_NAME, version: APP_VERSION };
const root = {
  message: `Welcome to ${APP_NAME}`,
  name: APP_NAME,
  version: APP_VERSION,
  docs: "/swagger" as const,
};

/** True when the client prefers HTML (a browser) over JSON. `*\/*` alone counts as JSON. */
export function prefersHtml(accept: string | null): boolean {
  if (!accept) return false;
  return new Negotiator({ headers: { accept } }).mediaType(["application/json", "text/html"]) === "text/html";
}

export function healthRoutes(ctx: AppContext) {
  return new Elysia({ name: "atrium/health" })
    .get("/health", () => health, {
      response: Health,
      detail: { summary: "Liveness: the application name and version", tags: ["turns"] },
    })
    .get(
      "/health/ready",
      async () => {
        if (!ctx.readiness.isReady) throw new AppError("not_ready", "Atrium is starting or shutting down");
        try {
          // app.db's connection itself (the port's prepared statements outlive a close), or PostgreSQL.
          if (ctx.db) ctx.db.query("SELECT 1").get();
          else await ctx.database.get("SELECT 1");
        } catch {
          throw new AppError("not_ready", "The database is unreachable");
        }
        const mode: "local" | "protected" = ctx.config.mode.kind;
        // How code runs (docs/design.md §11): "none" means protected mode refuses to run it.
        // Detected once per process (isolation.ts caches it), so this costs nothing per request.
        const sandbox = sandboxReport();
        return { status: "ready" as const, ...health, database: "ok" as const, mode, sandbox };
      },
      {
        response: { 200: Ready, 503: TurnsError },
        detail: { summary: "Readiness: composed and the database answers", tags: ["turns"] },
      },
    )
    .get("/api/health", () => ({ status: "ok" as const, runtime: ctx.readiness.state }), {
      response: ApiHealth,
      detail: { summary: "Chat health: status and chat runtime readiness", tags: ["chat"] },
    })
    .get(
      "/",
      ({ request, redirect }) => (prefersHtml(request.headers.get("accept")) ? redirect("/app/", 302) : root),
      {
        response: { 200: RootProbe, 302: Redirect },
        detail: { summary: "Root probe: JSON, or a redirect to the chat UI for browsers", tags: ["search"] },
      },
    );
}
