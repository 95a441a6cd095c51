/**
 * Per-request time of the full app handled in process (`app.handle`, no sockets), with and without the
 * local-surface guard, in alternating batches inside one process: the guard's own cost, free of the
 * socket and scheduling noise an HTTP measurement carries on a shared machine. Both apps listen (on a
 * free port, unused) so the guard takes the path it takes in a real server: the bound port known.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../server/app.ts";
import { parseCli } from "../../server/config/cli.ts";
import { createEnvSource } from "../../server/config/env.ts";
import { loadConfig } from "../../server/config/index.ts";
import { createContext } from "../../server/context.ts";
import { silentLogger } from "../../server/log.ts";
import { median } from "./stats.ts";

const repo = join(import.meta.dir, "..", "..");

async function appWith(surfaceGuard: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "atrium-bench-handle-"));
  const cli = parseCli(["--port", "0", "--data-dir", dir], {}, repo);
  if (cli.kind !== "serve") throw new Error("bad bench arguments");
  const env = createEnvSource({});
  const ctx = createContext({ config: loadConfig(cli.options, env), env, log: silentLogger });
  const composed = createApp(ctx, { surfaceGuard });
  await composed.compose();
  const app = composed.elysia;
  app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false, development: false });
  const port = app.server?.port ?? 0;
  const close = () => {
    void app.server?.stop(true);
    void composed.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { app, port, close };
}

/**
 * Microseconds per GET `path` with and without the guard: the median over pairs of adjacent batches
 * (alternating which goes first) of each, and of their difference.
 */
export async function handleTimes(path: string, pairs = 40, perBatch = 5_000) {
  const guarded = await appWith(true);
  const bare = await appWith(false);
  const time = async (subject: typeof guarded) => {
    const url = `http://127.0.0.1:${subject.port}${path}`;
    const headers = { host: `127.0.0.1:${subject.port}` };
    const started = performance.now();
    for (let i = 0; i < perBatch; i++) await subject.app.handle(new Request(url, { headers }));
    return ((performance.now() - started) * 1000) / perBatch;
  };
  await time(guarded);
  await time(bare);
  const withGuard: number[] = [];
  const without: number[] = [];
  for (let p = 0; p < pairs; p++) {
    const [first, second] = p % 2 ? [bare, guarded] : [guarded, bare];
    const a = await time(first);
    const b = await time(second);
    withGuard.push(first === guarded ? a : b);
    without.push(first === guarded ? b : a);
  }
  guarded.close();
  bare.close();
  return {
    guarded: median(withGuard),
    unguarded: median(without),
    extra: median(withGuard.map((g, i) => g - (without[i] ?? g))),
  };
}
