/**
 * Where the server is in its life: starting (composing: database migrations, family runtimes), ready,
 * or stopping (draining for shutdown). While starting only the health probes answer; every other route
 * gets 503 `service_not_ready`. While stopping, readiness is 503 but in-flight work is still served.
 */
import { Elysia } from "elysia";
import { AppError } from "./errors.ts";
import { pathOf } from "./path.ts";

export type LifeState = "starting" | "ready" | "stopping";

export class Readiness {
  private current: LifeState = "starting";

  markComposed() {
    if (this.current === "starting") this.current = "ready";
  }

  markDraining() {
    this.current = "stopping";
  }

  get state(): LifeState {
    return this.current;
  }

  get isReady(): boolean {
    return this.current === "ready";
  }
}

const ALWAYS_OPEN = new Set(["/health", "/health/ready", "/api/health"]);

export function readinessGate(readiness: Readiness) {
  return new Elysia({ name: "atrium/readiness" }).onRequest(({ request }) => {
    if (readiness.state !== "starting") return;
    if (!ALWAYS_OPEN.has(pathOf(request)))
      throw new AppError("not_ready", "Atrium is starting; try again in a moment");
  });
}
