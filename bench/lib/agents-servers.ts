/**
 * Child process for bench/agents.ts: the full Atrium server (offline model, empty data dir) and a bare
 * Bun WebSocket echo server, side by side. Prints one JSON line with both ports, its data dir and pid,
 * then serves until killed.
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
const dataDir = mkdtempSync(join(tmpdir(), "atrium-bench-agents-"));
const cli = parseCli(["--port", "0", "--data-dir", dataDir], {}, repo);
if (cli.kind !== "serve") throw new Error("bad bench arguments");
const env = createEnvSource({});
const app = await startServer({ config: loadConfig(cli.options, env), env, log: silentLogger });

const echo = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  reusePort: false,
  fetch(request, server) {
    return server.upgrade(request) ? undefined : new Response("upgrade required", { status: 426 });
  },
  websocket: {
    message(ws, message) {
      ws.send(message);
    },
  },
});

console.log(JSON.stringify({ app: app.port, echo: echo.port, dataDir, pid: process.pid }));
