/**
 * Whether the server has finished composing (database migrated, families started) and is not yet
 * draining for shutdown. Until then only the health probes answer; every other route gets 503
 * `service_not_ready`.
 */
import { Elysia } from "elysia";
import { AppError } from "./errors.ts";
import { pathOf } from "./path.ts";

export class Readiness {
  private composed = false;
  private draining = false;

  markComposed() {
    this.composed = true;
  }

  markDraining() {
    this.draining = true;
  }

  get isReady(): boolean {
    return this.composed && !this.draining;
  }

  get isComposed(): boolean {
    return this.composed;
  }
}

const ALWAYS_OPEN = new Set(["/health", "/health/ready", "/api/health"]);

export function readinessGate(readiness: Readiness) {
  return new Elysia({ name: "atrium/readiness" }).onRequest(({ request }) => {
    if (readiness.isComposed) return;
    if (!ALWAYS_OPEN.has(pathOf(request)))
      throw new AppError("not_ready", "Atrium is starting; try again in a moment");
  });
}
