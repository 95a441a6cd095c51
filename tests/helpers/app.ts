/**
 * A real app over a temp data dir, driven with `app.handle(new Request(...))`: the committed policy, a
 * controlled environment (never the developer's), real SQLite. It is composed, started and closed the
 * way the server does it (server/app.ts): `close()` ends the shutdown signal, stops every family (their
 * runtimes, sandbox pools, live sessions) and closes the database.
 */
import { join } from "node:path";
import type { AnyElysia } from "elysia";
import { type App, createApp } from "../../server/app.ts";
import type { CredentialResolver } from "../../server/auth/identity.ts";
import { type PasswordHasher, PasswordQueue } from "../../server/auth/password-queue.ts";
import { parseCli } from "../../server/config/cli.ts";
import { createEnvSource, type EnvRecord } from "../../server/config/env.ts";
import { loadConfig } from "../../server/config/index.ts";
import { type AppContext, createContext } from "../../server/context.ts";
import { createLogger, type Logger, silentLogger } from "../../server/log.ts";
import { freshPostgresDatabase } from "./postgres.ts";
import { TEST_SNAPSHOT_DIR } from "./sandbox-pools.ts";
import { tempDir } from "./tmp.ts";

export const REPO_ROOT = join(import.meta.dir, "..", "..");
export const BASE = "http://localhost";

export interface TestAppOptions {
  env?: EnvRecord;
  plugins?: ((ctx: AppContext) => AnyElysia)[];
  resolvers?: CredentialResolver[];
  /** Run migrations and family start hooks (default true). */
  compose?: boolean;
  /**
   * Then run the families' `serving` hooks, as a listening server does (turns warms its sandbox pool).
   * Default false: most tests never run Python.
   */
  serving?: boolean;
  log?: Logger;
  policyPath?: string;
  /** Extra command-line flags (e.g. `--trust-proxy loopback`). */
  args?: string[];
  /** An existing data dir (a restart on the same data): kept on close. Default: a fresh temp dir. */
  dataDir?: string;
  /**
   * The app's password queue (a counting hasher, a small line). Default: the server's queue over
   * CHEAP_ARGON2ID, so the suite's sign-ups do not each spend a quarter second of a busy core.
   */
  passwords?: PasswordQueue;
}

/**
 * argon2id at its smallest cost (1 MiB, one pass): the same algorithm, hash format and verification
 * path as production, about 150× cheaper. Only tests use it; the production cost (`ARGON2ID`, Bun's
 * default: 64 MiB, two passes) is checked in tests/auth/password-cost.test.ts, and servers the tests
 * spawn as processes keep it.
 */
export const CHEAP_ARGON2ID: PasswordHasher = {
  hash: (password) => Bun.password.hash(password, { algorithm: "argon2id", memoryCost: 1024, timeCost: 1 }),
  verify: (password, hash) => Bun.password.verify(password, hash),
};

export interface TestApp {
  /** The Elysia app (listen.ts serves it on a port). */
  app: AnyElysia;
  ctx: AppContext;
  dataDir: string;
  /** The instance of a family in this app, typed per family: `t.family("turns").services.pool`. */
  family: App["family"];
  request(path: string, init?: RequestInit): Promise<Response>;
  json<T = unknown>(path: string, init?: RequestInit): Promise<{ status: number; body: T; headers: Headers }>;
  /** Finishes startup when created with `compose: false`. */
  compose(): Promise<void>;
  /** Aborts the app's shutdown signal, as a server's SIGTERM does (streams end, sockets close 1001). */
  shutdown(): void;
  /** Shuts down, stops the families, closes the database and removes the temp data dir. */
  close(): Promise<void>;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dir = options.dataDir === undefined ? tempDir() : undefined;
  const dataDir = options.dataDir ?? (dir?.path as string);
  const cli = parseCli(["--data-dir", dataDir, "--port", "0", ...(options.args ?? [])], {}, REPO_ROOT);
  if (cli.kind !== "serve") throw new Error("unexpected CLI result");
  const env = createEnvSource({
    APP_SANDBOX_SNAPSHOT_DIR: TEST_SNAPSHOT_DIR,
    ...(await testDatabaseEnv()),
    ...options.env,
  });
  const policyPath = options.policyPath ?? cli.options.policyPath;
  const config = loadConfig({ ...cli.options, policyPath }, env);
  const shutdown = new AbortController();
  const ctx = createContext({
    config,
    env,
    log: options.log ?? silentLogger,
    resolvers: options.resolvers,
    passwords: options.passwords ?? new PasswordQueue({ hasher: CHEAP_ARGON2ID }),
    shutdown: shutdown.signal,
  });
  const composed = createApp(ctx, { plugins: options.plugins });
  if (options.compose !== false) await composed.compose();
  if (options.compose !== false && options.serving) composed.serving();
  const app = composed.elysia;
  const request = (path: string, init?: RequestInit) => app.handle(new Request(`${BASE}${path}`, init));
  return {
    app,
    ctx,
    dataDir,
    family: composed.family,
    request,
    async json(path, init) {
      const response = await request(path, init);
      return { status: response.status, body: await response.json(), headers: response.headers };
    },
    compose: () => composed.compose(),
    shutdown: () => shutdown.abort(),
    async close() {
      shutdown.abort();
      await composed.close();
      dir?.remove();
    },
  };
}

/**
 * `ATRIUM_TEST_DATABASE=postgres` runs every test app on a fresh PostgreSQL database (the throwaway
 * cluster of helpers/postgres.ts) instead of app.db alone: the same suite on the other engine.
 */
export async function testDatabaseEnv(): Promise<EnvRecord> {
  if (process.env.ATRIUM_TEST_DATABASE !== "postgres") return {};
  return { APP_DATABASE_URL: await freshPostgresDatabase() };
}

/** A logger whose lines a test can read. */
export function memoryLogger(): { log: Logger; lines: () => Record<string, unknown>[]; text: () => string } {
  const out: string[] = [];
  const log = createLogger({ level: "debug", sink: { write: (line) => out.push(line) } });
  return { log, lines: () => out.map((l) => JSON.parse(l)), text: () => out.join("") };
}

export function postJson(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}
