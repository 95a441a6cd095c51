/**
 * Running the server: listen, finish composition, and shut down cleanly.
 *
 * Shutdown (SIGINT/SIGTERM in main.ts): readiness turns 503, the shutdown signal ends open streams,
 * the listener stops accepting and in-flight responses finish (forced after a grace period), families
 * release their runtimes, and SQLite closes (checkpointing the WAL).
 */
import type { AnyElysia } from "elysia";
import { type App, createApp } from "./app.ts";
import type { EnvSource } from "./config/env.ts";
import type { AppConfig } from "./config/index.ts";
import { type AppContext, createContext } from "./context.ts";
import type { Logger } from "./log.ts";

export interface StartOptions {
  config: AppConfig;
  env: EnvSource;
  log: Logger;
  plugins?: ((ctx: AppContext) => AnyElysia)[];
  /** Called as soon as the port is bound, before composition finishes. */
  onListening?: (url: string) => void;
  /** How long in-flight requests may take to finish on shutdown. */
  graceMs?: number;
  /** false only in bench/http.ts, to measure the Host/Origin guard's cost (AppOptions.surfaceGuard). */
  surfaceGuard?: boolean;
}

export interface RunningServer {
  url: string;
  port: number;
  ctx: AppContext;
  /** The instance of a family in this server (tests reach a family's services through it). */
  family: App["family"];
  stop(): Promise<void>;
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config, env, log, graceMs = 10_000 } = options;
  const shutdown = new AbortController();
  const ctx = createContext({ config, env, log, shutdown: shutdown.signal });
  const composed = createApp(ctx, { plugins: options.plugins, surfaceGuard: options.surfaceGuard });
  const app = composed.elysia;

  app.listen({
    hostname: config.host,
    port: config.port,
    maxRequestBodySize: config.bodyLimitBytes,
    // A second server on the same port must fail, not share it.
    reusePort: false,
    // Never render Bun's development error page (it shows stacks).
    development: false,
    // Seconds without traffic before a connection closes; streams send heartbeats or data well within it.
    idleTimeout: 255,
  });
  const server = app.server;
  if (!server) throw new Error("the server did not start");
  const host = server.hostname?.includes(":") ? `[${server.hostname}]` : server.hostname;
  const url = `http://${host}:${server.port}`;
  options.onListening?.(url);

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      ctx.readiness.markDraining();
      shutdown.abort();
      const graceful = server.stop(false);
      const timer = setTimeout(() => void server.stop(true), graceMs);
      await graceful;
      clearTimeout(timer);
      await composed.close();
      log.info("stopped");
    })();
    return stopping;
  };

  try {
    await composed.compose();
  } catch (error) {
    await stop();
    throw error;
  }
  composed.serving();
  return { url, port: server.port ?? config.port, ctx, family: composed.family, stop };
}
