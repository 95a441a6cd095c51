/**
 * Shell commands in a user's long-lived sandbox (one jail, commands sent to its runner) against a
 * fresh jail per command (local mode's shell: bubblewrap started for every command), measured in the
 * same run on the same host: median latency of a trivial command (`true`) and of a small one (`ls`),
 * the ratio fresh / persistent, the cold start of a sandbox, and the throughput of a command's output.
 *
 *   bun bench/sandbox-exec.ts [--commands 50]
 */
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { confinementFor } from "../server/sandbox/confinement.ts";
import { detectSandbox } from "../server/sandbox/isolation.ts";
import { DEFAULT_LIMITS } from "../server/sandbox/limits.ts";
import { jailedExec } from "../server/sandbox/shell-jail.ts";
import { sandboxMigrations } from "../server/sandbox/users/migrations/index.ts";
import { LocalSandboxProvider } from "../server/sandbox/users/provider.ts";
import { sqlitePort } from "../server/storage/db/sqlite.ts";
import { migrate } from "../server/storage/migrate.ts";
import { fmt, median } from "./lib/stats.ts";

const { values } = parseArgs({ options: { commands: { type: "string", default: "50" } } });
const count = Number(values.commands);

const { shellPlan } = detectSandbox();
if (!shellPlan) {
  console.log("bubblewrap is not available here: nothing to measure");
  process.exit(0);
}

const dataDir = mkdtempSync(join(tmpdir(), "atrium-bench-sandbox-"));
const db = new Database(":memory:");
migrate(db, [sandboxMigrations]);
const provider = new LocalSandboxProvider(sqlitePort(db), { dataDir });
const quiet = { onData: () => {} };

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

try {
  const cold = await timed(() => provider.ensure("bench"));
  const persistent = async (command: string) => {
    const times: number[] = [];
    for (let i = 0; i < count; i++) times.push(await timed(() => provider.exec("bench", command, quiet)));
    return median(times);
  };
  const workspace = join(dataDir, "fresh");
  mkdirSync(workspace);
  const exec = jailedExec(
    {
      plan: shellPlan,
      limits: DEFAULT_LIMITS,
      network: "none",
      confinement: confinementFor("bubblewrap", DEFAULT_LIMITS),
    },
    workspace,
  );
  const fresh = async (command: string) => {
    const times: number[] = [];
    for (let i = 0; i < count; i++) times.push(await timed(() => exec(command, workspace, quiet)));
    return median(times);
  };
  console.log(`sandbox cold start (jail + runner ready): ${fmt(cold, 1)} ms`);
  for (const command of ["true", "ls -la /usr/bin >/dev/null"]) {
    const [a, b] = [await persistent(command), await fresh(command)];
    console.log(
      `\`${command}\`: persistent ${fmt(a, 2)} ms, fresh jail ${fmt(b, 2)} ms (median of ${count}); fresh / persistent = ${fmt(b / a, 1)}x`,
    );
  }
  let bytes = 0;
  const flood = await timed(() =>
    provider.exec("bench", "head -c 50000000 /dev/zero", {
      onData: (d) => {
        bytes += d.length;
      },
    }),
  );
  console.log(`output throughput through the runner: ${fmt(bytes / 1024 / 1024 / (flood / 1000), 0)} MiB/s`);
} finally {
  await provider.close();
  rmSync(dataDir, { recursive: true, force: true });
}
