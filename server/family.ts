/**
 * One API family as the app composes it. What a family declares statically: its name, docs tag,
 * numbered migrations, the paths it owns and the error envelope of those paths. What it is for one app:
 * an instance `create(ctx)` returns, holding its own services, with its routes (an Elysia plugin) and
 * optional hooks: `start` for runtimes that warm up after the server listens (readiness waits for it),
 * `serving` for background warm-up readiness does not wait for, `stop` to release them on shutdown.
 * Nothing about a family lives in module-level state: two apps in one process share nothing.
 */
import type { AnyElysia } from "elysia";
import type { AppContext } from "./context.ts";
import type { ErrorEnvelope } from "./http/errors.ts";
import type { FamilyPaths } from "./http/families.ts";
import type { Migration } from "./storage/migrate.ts";

export interface FamilyInstance {
  routes: AnyElysia;
  /** Called once migrations ran, before readiness opens. */
  start?(): Promise<void>;
  /** Called once a listening server is composed: background warm-up that must not delay readiness. */
  serving?(): void;
  /** Called after the server stopped accepting requests, before the database closes. */
  stop?(): Promise<void>;
}

export interface Family<Name extends string = string, Instance extends FamilyInstance = FamilyInstance> {
  name: Name;
  tag: { name: string; description: string };
  migrations: Migration[];
  paths: FamilyPaths;
  envelope: ErrorEnvelope;
  create(ctx: AppContext): Instance;
}

/** Declares a family, keeping its name and instance types (so `app.family("turns")` is typed). */
export function defineFamily<const Name extends string, Instance extends FamilyInstance>(
  family: Family<Name, Instance>,
): Family<Name, Instance> {
  return family;
}
