/**
 * HTTP overhead of the full app. GET /health and GET /api/health through every plugin (errors, the
 * local-surface guard, body limit, readiness, identity, routing) against a raw Bun.serve answering the
 * same bytes, each in its own child process and measured in interleaved rounds. Then what the
 * local-surface guard (Host allow-list, Origin check) costs, against the same app without it (aim <= 0.02
 * of raw). First: cold start of `bun server/main.ts` to /health/ready 200 on an empty data dir against a
 * bare Bun.serve process in the same run (aim <= 300 ms), from source and as the compiled binary
 * (`npm run build`: built once into a temporary folder, or `--binary PATH` when already built; `--skip-binary`
 * leaves it out), and the idle RSS of a fresh server.
 *
 *   bun bench/http.ts [--seconds 3] [--rounds 3] [--connections 32] [--cold-runs 9]
 *                     [--skip-cold-start | --cold-start-only] [--binary PATH | --skip-binary]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildServerBinary } from "../scripts/build.ts";
import { handleTimes } from "./lib/handle-time.ts";
import { load } from "./lib/load.ts";
import { coldStart, cpuSeconds, rssMiB } from "./lib/process.ts";
import { fmt, median } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "3" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "32" },
    "skip-cold-start": { type: "boolean", default: false },
    "cold-start-only": { type: "boolean", default: false },
    "cold-runs": { type: "string", default: "9" },
    binary: { type: "string" },
    "skip-binary": { type: "boolean", default: false },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const repo = join(import.meta.dir, "..");

/** Starts one server of bench/lib/servers.ts in its own process; resolves with its port. */
async function spawnServer(kind: "app" | "unguarded" | "raw") {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "lib", "servers.ts"), kind], {
    stdout: "pipe",
    stderr: "inherit",
    cwd: repo,
  });
  const first = new TextDecoder().decode((await proc.stdout.getReader().read()).value);
  return { proc, port: (JSON.parse(first) as { port: number }).port };
}

async function throughput() {
  const servers = { raw: await spawnServer("raw"), app: await spawnServer("app") };
  const results: Record<string, number[]> = {};
  let tool = "";
  try {
    for (let round = 0; round < rounds; round++) {
      for (const path of ["/health", "/api/health"]) {
        for (const name of ["raw", "app"] as const) {
          const result = await load(`http://127.0.0.1:${servers[name].port}${path}`, seconds, connections);
          tool = result.tool;
          const key = `${name} ${path}`;
          results[key] = [...(results[key] ?? []), result.requestsPerSecond];
        }
      }
    }
  } finally {
    for (const server of Object.values(servers)) server.proc.kill();
  }
  console.log(
    `HTTP throughput (${tool}, ${connections} connections, ${rounds} interleaved rounds of ${seconds}s, median req/s)`,
  );
  for (const path of ["/health", "/api/health"]) {
    const raw = median(results[`raw ${path}`] ?? []);
    const app = median(results[`app ${path}`] ?? []);
    console.log(
      `  GET ${path.padEnd(12)} raw Bun.serve ${fmt(raw).padStart(8)}   Atrium ${fmt(app).padStart(8)}   ratio ${fmt(app / raw, 2)} (aim >= 0.9)`,
    );
  }
  return median(results["raw /api/health"] ?? []);
}

/**
 * What the Host/Origin guard costs on GET /api/health, as a share of raw Bun.serve (aim <= 0.02):
 * (raw / unguarded) - (raw / guarded), where each is the server's CPU time per request while wrk loads
 * it (from /proc, over rounds of raw, guarded and unguarded in alternating order). Throughput on a
 * shared 2-core machine wandered 5-15% between identical servers; CPU time per request is what
 * throughput is the inverse of when the server is the bottleneck, and other load barely moves it.
 * The in-process figure times app.handle with and without the guard in alternating batches.
 */
async function guardCost(rawRps: number) {
  const servers = {
    raw: await spawnServer("raw"),
    app: await spawnServer("app"),
    unguarded: await spawnServer("unguarded"),
  };
  const cpu: Record<string, number[]> = { raw: [], app: [], unguarded: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      const order =
        round % 2 ? (["unguarded", "app", "raw"] as const) : (["raw", "app", "unguarded"] as const);
      for (const name of order) {
        const { proc, port } = servers[name];
        const before = cpuSeconds(proc.pid);
        const { requestsPerSecond } = await load(`http://127.0.0.1:${port}/api/health`, seconds, connections);
        cpu[name]?.push((cpuSeconds(proc.pid) - before) / (requestsPerSecond * seconds));
      }
    }
  } finally {
    for (const server of Object.values(servers)) server.proc.kill();
  }
  const costs = (cpu.raw ?? []).map((r, i) => r / (cpu.unguarded?.[i] ?? 1) - r / (cpu.app?.[i] ?? 1));
  const us = (name: string) => fmt(median(cpu[name] ?? []) * 1e6, 2);
  const handle = await handleTimes("/api/health");
  const extra = handle.extra;
  console.log("Host/Origin guard on GET /api/health (aim <= 0.02 of raw Bun.serve):");
  console.log(
    `  HTTP, server CPU per request: raw ${us("raw")} us, guarded ${us("app")} us, unguarded ${us("unguarded")} us; the guard costs ${fmt(median(costs), 3)} of raw (median of ${rounds} rounds: ${costs.map((c) => fmt(c, 3)).join(", ")})`,
  );
  console.log(
    `  in process: ${fmt(handle.guarded, 2)} vs ${fmt(handle.unguarded, 2)} us per request, median difference +${fmt(extra, 2)} us = ${fmt((extra * rawRps) / 1e6, 3)} of a raw request at ${fmt(rawRps)} req/s`,
  );
}

/**
 * Cold start: spawn to the first 200 of /health/ready, `bun server/main.ts` on an empty data dir against
 * a bare Bun.serve process (bench/lib/bare-server.ts) started the same way, in alternating runs, so the
 * ratio and the difference (Atrium's own start-up) hold on a machine whose load changes during the run.
 * Each process gets a fresh HOME, so Bun's runtime transpiler cache is empty and every source file is
 * transpiled and written to it: a start in a HOME the install never warmed. "cached" starts the same
 * server with the cache of this run (BUN_RUNTIME_TRANSPILER_CACHE_PATH), filled first by what `npm
 * install` runs last (scripts/warm-start.ts): a checkout's first start after its install, and every later
 * start, where a user's HOME keeps the cache. "binary" is the compiled server (it transpiles nothing, and
 * carries JSC bytecode: scripts/build.ts), with the cache folder it writes its embedded files to kept
 * across the run's starts, as a user's is.
 */
async function coldStarts(runs: number, binary: string | undefined) {
  type Kind = "bare" | "atrium" | "cached" | "binary";
  const times: Record<Kind, number[]> = { bare: [], atrium: [], cached: [], binary: [] };
  // The process's own CPU time at readiness: what a loaded machine stretches the wall clock over.
  const cpu: Record<Kind, number[]> = { bare: [], atrium: [], cached: [], binary: [] };
  const rss: Record<Kind, number[]> = { bare: [], atrium: [], cached: [], binary: [] };
  const argv = {
    bare: [process.execPath, "bench/lib/bare-server.ts"],
    atrium: [process.execPath, "server/main.ts"],
    cached: [process.execPath, "server/main.ts"],
    binary: [binary ?? ""],
  };
  const cache = mkdtempSync(join(tmpdir(), "atrium-bench-transpiled-"));
  const binaryCache = mkdtempSync(join(tmpdir(), "atrium-bench-binary-cache-"));
  const env = (name: Kind): Record<string, string> =>
    name === "cached"
      ? { BUN_RUNTIME_TRANSPILER_CACHE_PATH: cache }
      : name === "binary"
        ? { XDG_CACHE_HOME: binaryCache }
        : {};
  const start = async (name: Kind) => {
    const data = mkdtempSync(join(tmpdir(), "atrium-bench-cold-"));
    const started = await coldStart(argv[name], repo, data, env(name));
    return { ...started, data };
  };
  const warmUp = Bun.spawnSync([process.execPath, "scripts/warm-start.ts"], {
    cwd: repo,
    env: { PATH: process.env.PATH ?? "", HOME: cache, BUN_RUNTIME_TRANSPILER_CACHE_PATH: cache },
  });
  if (warmUp.exitCode !== 0) throw new Error("scripts/warm-start.ts failed");
  if (binary) {
    const warm = await start("binary");
    warm.proc.kill("SIGTERM");
    await warm.proc.exited;
    rmSync(warm.data, { recursive: true, force: true });
  }
  const orders: Kind[][] = [
    ["bare", "atrium", "cached", "binary"],
    ["binary", "cached", "atrium", "bare"],
    ["atrium", "binary", "bare", "cached"],
  ];
  for (let i = 0; i < runs; i++) {
    for (const name of (orders[i % orders.length] ?? []).filter((k) => binary || k !== "binary")) {
      const { proc, readyMs, data } = await start(name);
      times[name].push(readyMs);
      cpu[name].push(cpuSeconds(proc.pid) * 1000);
      if (name === "atrium" || name === "binary") {
        await Bun.sleep(1000);
        if (process.platform === "linux") rss[name].push(rssMiB(proc.pid));
      }
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(data, { recursive: true, force: true });
    }
  }
  rmSync(cache, { recursive: true, force: true });
  rmSync(binaryCache, { recursive: true, force: true });
  const bare = median(times.bare);
  const atrium = median(times.atrium);
  const cached = median(times.cached);
  const runsOf = (name: Kind) => times[name].map((t) => fmt(t)).join(", ");
  console.log(`Cold start, spawn to /health/ready 200 (median of ${runs} alternating runs, aim <= 300 ms):`);
  console.log(`  bare Bun.serve process ${fmt(bare)} ms   (runs: ${runsOf("bare")})`);
  console.log(
    `  Atrium server/main.ts after npm install (Bun's transpiler cache warm; every later start too) ${fmt(cached)} ms   (runs: ${runsOf("cached")})`,
  );
  console.log(`  ratio ${fmt(cached / bare, 2)}; Atrium's own start-up ${fmt(cached - bare)} ms`);
  console.log(
    `  Atrium server/main.ts, cache empty (a HOME the install never warmed) ${fmt(atrium)} ms   (runs: ${runsOf("atrium")})`,
  );
  if (binary)
    console.log(
      `  Atrium's compiled binary (bytecode) ${fmt(median(times.binary))} ms   (runs: ${runsOf("binary")}); ratio to bare ${fmt(median(times.binary) / bare, 2)}`,
    );
  // /proc counts CPU in 10 ms ticks: a bare server's start is usually under one.
  const ms = (values: number[]) => (median(values) > 0 ? `${fmt(median(values))} ms` : "< 10 ms");
  console.log(
    `  the process's CPU time at readiness: bare ${ms(cpu.bare)}, Atrium ${ms(cpu.cached)}, Atrium with the cache empty ${ms(cpu.atrium)}${binary ? `, the binary ${ms(cpu.binary)}` : ""}`,
  );
  if (rss.atrium.length)
    console.log(
      `Idle RSS after start: median ${fmt(median(rss.atrium), 1)} MiB${binary ? `, the binary ${fmt(median(rss.binary), 1)} MiB` : ""}`,
    );
}

/** The binary to time: --binary PATH, else one built now into a temporary folder (a few seconds). */
async function benchBinary(): Promise<{ path?: string; remove(): void }> {
  if (values["skip-binary"]) return { remove() {} };
  if (values.binary) return { path: values.binary, remove() {} };
  const dir = mkdtempSync(join(tmpdir(), "atrium-bench-binary-"));
  const path = await buildServerBinary({ outfile: join(dir, "atrium") });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

if (!values["skip-cold-start"]) {
  const built = await benchBinary();
  try {
    await coldStarts(Number(values["cold-runs"]), built.path);
  } finally {
    built.remove();
  }
}
if (!values["cold-start-only"]) await guardCost(await throughput());
