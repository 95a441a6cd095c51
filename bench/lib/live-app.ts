/**
 * A composed Atrium app listening on a loopback port over a temp data dir, for benches that time HTTP
 * calls against the real server in process (bench/mcp.ts, bench/openai.ts). `close()` stops it and
 * removes the data dir.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type App, createApp } from "../../server/app.ts";
import { parseCli } from "../../server/config/cli.ts";
import { createEnvSource } from "../../server/config/env.ts";
import { loadConfig } from "../../server/config/index.ts";
import { createContext } from "../../server/context.ts";
import { silentLogger } from "../../server/log.ts";

export interface LiveApp {
  app: App;
  /** `http://127.0.0.1:<port>` */
  base: string;
  close(): Promise<void>;
}

export async function liveApp(name: string): Promise<LiveApp> {
  const dir = mkdtempSync(join(tmpdir(), `atrium-bench-${name}-`));
  const cli = parseCli(["--port", "0", "--data-dir", dir], {}, join(import.meta.dir, "..", ".."));
  if (cli.kind !== "serve") throw new Error("bad bench arguments");
  const env = createEnvSource({ APP_SANDBOX_WARM: "0" });
  const ctx = createContext({ config: loadConfig(cli.options, env), env, log: silentLogger });
  const app = createApp(ctx);
  await app.compose();
  app.elysia.listen({ hostname: "127.0.0.1", port: 0 });
  return {
    app,
    base: `http://127.0.0.1:${app.elysia.server?.port}`,
    async close() {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
