/**
 * A real app over a temp data dir, driven with `app.handle(new Request(...))`: the committed policy, a
 * controlled environment (never the developer's), real SQLite.
 */
import { join } from "node:path";
import type { AnyElysia } from "elysia";
import { compose, createApp } from "../../server/app.ts";
import type { CredentialResolver } from "../../server/auth/identity.ts";
import { parseCli } from "../../server/config/cli.ts";
import { createEnvSource, type EnvRecord } from "../../server/config/env.ts";
import { loadConfig } from "../../server/config/index.ts";
import { type AppContext, createContext } from "../../server/context.ts";
import type { Family } from "../../server/family.ts";
import { createLogger, type Logger, silentLogger } from "../../server/log.ts";
import { tempDir } from "./tmp.ts";

export const REPO_ROOT = join(import.meta.dir, "..", "..");
export const BASE = "http://localhost";

export interface TestAppOptions {
  env?: EnvRecord;
  families?: Family[];
  plugins?: ((ctx: AppContext) => AnyElysia)[];
  resolvers?: CredentialResolver[];
  /** Run migrations and family start hooks (default true). */
  compose?: boolean;
  log?: Logger;
  policyPath?: string;
}

export interface TestApp {
  app: AnyElysia;
  ctx: AppContext;
  dataDir: string;
  request(path: string, init?: RequestInit): Promise<Response>;
  json<T = unknown>(path: string, init?: RequestInit): Promise<{ status: number; body: T; headers: Headers }>;
  close(): void;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dir = tempDir();
  const cli = parseCli(["--data-dir", dir.path, "--port", "0"], {}, REPO_ROOT);
  if (cli.kind !== "serve") throw new Error("unexpected CLI result");
  const env = createEnvSource(options.env ?? {});
  const policyPath = options.policyPath ?? cli.options.policyPath;
  const config = loadConfig({ ...cli.options, policyPath }, env);
  const ctx = createContext({ config, env, log: options.log ?? silentLogger, resolvers: options.resolvers });
  const app = createApp(ctx, { families: options.families, plugins: options.plugins });
  if (options.compose !== false) await compose(ctx, options.families);
  const request = (path: string, init?: RequestInit) => app.handle(new Request(`${BASE}${path}`, init));
  return {
    app,
    ctx,
    dataDir: dir.path,
    request,
    async json(path, init) {
      const response = await request(path, init);
      return { status: response.status, body: await response.json(), headers: response.headers };
    },
    close() {
      ctx.db.close();
      dir.remove();
    },
  };
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
