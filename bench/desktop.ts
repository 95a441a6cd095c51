/**
 * What the desktop app and a headless install feel: the compiled binary against `bun server/main.ts`
 * (the reference, measured in the same run, interleaved). Cold start to /health/ready 200 from an empty
 * data dir, the first GET of /app/ and its script (built ahead of time: build/web/ from source, embedded in
 * the binary), idle RSS, and the supervisor's full launch (port choice, spawn, readiness wait) and stop.
 *
 *   bun bench/desktop.ts [--runs 5]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type ServerCommand, ServerSupervisor, serverCommand } from "../desktop/supervisor.ts";
import { buildServerBinary } from "../scripts/build.ts";
import { coldStart, rssMiB } from "./lib/process.ts";
import { fmt, median } from "./lib/stats.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const runs = Number(values.runs);
const repo = join(import.meta.dir, "..");
const scratch = mkdtempSync(join(tmpdir(), "atrium-bench-desktop-"));

const buildStarted = performance.now();
const binary = await buildServerBinary({ outfile: join(scratch, "resources", "server", "atrium") });
const buildMs = performance.now() - buildStarted;
const binaryMiB = statSync(binary).size / 2 ** 20;

const SOURCE: ServerCommand = {
  command: process.execPath,
  args: [join(repo, "server", "main.ts")],
  cwd: repo,
};
const BINARY: ServerCommand = { command: binary, args: [], cwd: scratch };

interface Sample {
  readyMs: number;
  firstScriptMs: number;
  rssMiB: number;
}

async function sample(command: ServerCommand): Promise<Sample> {
  const data = mkdtempSync(join(scratch, "data-"));
  const { proc, url, readyMs } = await coldStart([command.command, ...command.args], command.cwd, data);
  const scriptStarted = performance.now();
  const html = await (await fetch(`${url}/app/`)).text();
  const script = html.match(/src="(\/app\/assets\/[^"]+\.js)"/)?.[1] ?? "/app/";
  await (await fetch(`${url}${script}`)).text();
  const firstScriptMs = performance.now() - scriptStarted;
  await Bun.sleep(1000);
  const rss = rssMiB(proc.pid);
  proc.kill("SIGTERM");
  await proc.exited;
  rmSync(data, { recursive: true, force: true });
  return { readyMs, firstScriptMs, rssMiB: rss };
}

async function supervisedLaunch(): Promise<{ startMs: number; stopMs: number }> {
  const dataDir = mkdtempSync(join(scratch, "data-"));
  const command = serverCommand({
    packaged: true,
    resourcesPath: join(scratch, "resources"),
    repoRoot: repo,
    dataDir,
  });
  const supervisor = new ServerSupervisor({
    command,
    dataDir,
    env: { PATH: process.env.PATH ?? "", HOME: dataDir },
  });
  const started = performance.now();
  await supervisor.start();
  const startMs = performance.now() - started;
  const stopping = performance.now();
  await supervisor.stop();
  const stopMs = performance.now() - stopping;
  rmSync(dataDir, { recursive: true, force: true });
  return { startMs, stopMs };
}

const samples: Record<"source" | "binary", Sample[]> = { source: [], binary: [] };
const launches: { startMs: number; stopMs: number }[] = [];
try {
  for (let i = 0; i < runs; i++) {
    samples.source.push(await sample(SOURCE));
    samples.binary.push(await sample(BINARY));
    launches.push(await supervisedLaunch());
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const m = (which: "source" | "binary", key: keyof Sample) => median(samples[which].map((s) => s[key]));
console.log(`Server binary: built in ${fmt(buildMs / 1000, 1)} s, ${fmt(binaryMiB, 0)} MiB`);
console.log(`Medians over ${runs} interleaved runs, binary vs bun server/main.ts:`);
for (const [label, key, unit, digits] of [
  ["cold start to /health/ready 200", "readyMs", "ms", 0],
  ["first GET /app/ + script", "firstScriptMs", "ms", 1],
  ["idle RSS after start", "rssMiB", "MiB", 1],
] as const) {
  const source = m("source", key);
  const bin = m("binary", key);
  console.log(
    `  ${label.padEnd(34)} source ${fmt(source, digits).padStart(7)} ${unit}   binary ${fmt(bin, digits).padStart(7)} ${unit}   ratio ${fmt(bin / source, 2)}`,
  );
}
console.log(
  `Supervisor launch of the binary (free port, spawn, readiness wait): median ${fmt(median(launches.map((l) => l.startMs)))} ms; stop (SIGTERM, exit): median ${fmt(median(launches.map((l) => l.stopMs)))} ms`,
);
