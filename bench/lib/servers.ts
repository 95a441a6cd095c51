/**
 * Child process for bench/http.ts: the full Atrium app and a raw Bun.serve that answers the same bytes,
 * side by side in one process. Prints one JSON line with both ports, then serves until killed.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseCli } from "../../server/config/cli.ts";
import { createEnvSource } from "../../server/config/env.ts";
import { loadConfig } from "../../server/config/index.ts";
import { startServer } from "../../server/lifecycle.ts";
import { silentLogger } from "../../server/log.ts";

const repo = join(import.meta.dir, "..", "..");
const cli = parseCli(["--port", "0", "--data-dir", mkdtempSync(join(tmpdir(), "atrium-bench-"))], {}, repo);
if (cli.kind !== "serve") throw new Error("bad bench arguments");
const env = createEnvSource({});
const app = await startServer({ config: loadConfig(cli.options, env), env, log: silentLogger });

// The raw server answers with exactly the bytes the app sends for these two routes.
const bodies: Record<string, string> = {};
for (const path of ["/health", "/api/health"]) bodies[path] = await (await fetch(`${app.url}${path}`)).text();
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

console.log(JSON.stringify({ app: app.port, raw: raw.port }));
