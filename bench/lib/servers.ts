/**
 * Child process for bench/http.ts: one server per process, so that none of them shares an event loop
 * or a heap with another (two apps in one process measured 5-10% apart even when identical).
 *
 *   bun bench/lib/servers.ts app|unguarded|raw
 *
 * `app` is the full Atrium app; `unguarded` the same without the local-surface guard (Host allow-list
 * and Origin check), to price it; `raw` a Bun.serve answering the bytes the app sends for /health and
 * /api/health. Prints one JSON line with its port, then serves until killed.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseCli } from "../../server/config/cli.ts";
import { createEnvSource } from "../../server/config/env.ts";
import { loadConfig } from "../../server/config/index.ts";
import { startServer } from "../../server/lifecycle.ts";
import { silentLogger } from "../../server/log.ts";

const kind = process.argv[2];
const repo = join(import.meta.dir, "..", "..");
const env = createEnvSource({});

async function startApp(surfaceGuard: boolean) {
  const cli = parseCli(["--port", "0", "--data-dir", mkdtempSync(join(tmpdir(), "atrium-bench-"))], {}, repo);
  if (cli.kind !== "serve") throw new Error("bad bench arguments");
  return startServer({ config: loadConfig(cli.options, env), env, log: silentLogger, surfaceGuard });
}

/** The bytes the app answers, so the raw server sends exactly as much. */
async function appBodies(): Promise<Record<string, string>> {
  const app = await startApp(true);
  const bodies: Record<string, string> = {};
  for (const path of ["/health", "/api/health"])
    bodies[path] = await (await fetch(`${app.url}${path}`)).text();
  await app.stop();
  return bodies;
}

let port: number;
if (kind === "app" || kind === "unguarded") {
  port = (await startApp(kind === "app")).port;
} else if (kind === "raw") {
  const bodies = await appBodies();
  const headers = { "content-type": "application/json;charset=utf-8" };
  const raw = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    reusePort: false,
    fetch(request) {
      const body = bodies[new URL(request.url).pathname];
      return body ? new Response(body, { headers }) : new Response("not found", { status: 404 });
    },
  });
  port = raw.port ?? 0;
} else {
  throw new Error(`usage: servers.ts app|unguarded|raw (got ${kind})`);
}
console.log(JSON.stringify({ port }));
