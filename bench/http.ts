/**
 * HTTP overhead of the full app. GET /health and GET /api/health through every plugin (request id,
 * errors, body limit, readiness, identity, routing) against a raw Bun.serve answering the same bytes,
 * both in one child process and measured in interleaved rounds. Also: cold start of `bun server/main.ts`
 * to /health/ready 200 on an empty data dir, and the idle RSS of a fresh server.
 *
 *   bun bench/http.ts [--seconds 3] [--rounds 3] [--connections 32]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { load } from "./lib/load.ts";
import { coldStart, rssMiB } from "./lib/process.ts";
import { fmt, median } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "3" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "32" },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const repo = join(import.meta.dir, "..");

async function throughput() {
  const servers = Bun.spawn([process.execPath, join(import.meta.dir, "lib", "servers.ts")], {
    stdout: "pipe",
    stderr: "inherit",
    cwd: repo,
  });
  const reader = servers.stdout.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  const ports = JSON.parse(first) as { app: number; raw: number };
  const results: Record<string, number[]> = {};
  let tool = "";
  try {
    for (let round = 0; round < rounds; round++) {
      for (const path of ["/health", "/api/health"]) {
        for (const [name, port] of [
          ["raw", ports.raw],
          ["app", ports.app],
        ] as const) {
          const result = await load(`http://127.0.0.1:${port}${path}`, seconds, connections);
          tool = result.tool;
          const key = `${name} ${path}`;
          results[key] = [...(results[key] ?? []), result.requestsPerSecond];
        }
      }
    }
  } finally {
    servers.kill();
  }
  console.log(
    `HTTP throughput (${tool}, ${connections} connections, ${rounds} interleaved rounds of ${seconds}s, median req/s)`,
  );
  for (const path of ["/health", "/api/health"]) {
    const raw = median(results[`raw ${path}`] ?? []);
    const app = median(results[`app ${path}`] ?? []);
    console.log(
      `  GET ${path.padEnd(12)} raw Bun.serve ${fmt(raw).padStart(8)}   Atrium ${fmt(app).padStart(8)}   ratio ${fmt(app / raw, 2)} (aim >= 0.85)`,
    );
  }
}

async function coldStarts(runs = 5) {
  const times: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i++) {
    const data = mkdtempSync(join(tmpdir(), "atrium-bench-cold-"));
    const { proc, readyMs } = await coldStart([process.execPath, "server/main.ts"], repo, data);
    times.push(readyMs);
    await Bun.sleep(1000);
    if (process.platform === "linux") rss.push(rssMiB(proc.pid));
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(data, { recursive: true, force: true });
  }
  console.log(
    `Cold start to /health/ready 200: median ${fmt(median(times))} ms over ${runs} runs (aim < 300 ms)`,
  );
  if (rss.length) console.log(`Idle RSS after start: median ${fmt(median(rss), 1)} MiB`);
}

await coldStarts();
await throughput();
