/**
 * One API family as the app composes it: its docs tag, its own numbered migrations, its routes (an
 * Elysia plugin built from the context), and optional start/stop hooks for runtimes that warm up after
 * the server listens (readiness waits for them) and must be released on shutdown, and a `serving` hook
 * for warm-up that readiness does not wait for.
 */
import type { AnyElysia } from "elysia";
import type { AppContext } from "./context.ts";
import type { FamilyName } from "./http/families.ts";
import type { Migration } from "./storage/migrate.ts";

export interface Family {
  name: FamilyName;
  tag: { name: string; description: string };
  migrations: Migration[];
  routes(ctx: AppContext): AnyElysia;
  start?(ctx: AppContext): Promise<void>;
  /** Called once a listening server is composed: background warm-up that must not delay readiness. */
  serving?(ctx: AppContext): void;
  stop?(): Promise<void>;
}
