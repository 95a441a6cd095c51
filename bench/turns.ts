/**
 * Turns: the cost of the sandbox boundary and of opening a turn.
 *
 * 1. A trivial Python step in a warm sandboxed interpreter (subprocess + bubblewrap + JSON-lines pipe)
 *    against a bare pyodide `runPython` in this process (no boundary), measured in the same run: the
 *    difference is the step overhead (aim < 5 ms).
 * 2. Cold interpreter start (spawn → pyodide ready), which the warm pool hides.
 * 3. Turn open → `turn_start` on a real server with a warm pool, offline model.
 * 4. The first turn right after a server process starts (the pool warms once it is composed), in ms
 *    after /health/ready: on a fresh data dir, then after a restart with the snapshot cached.
 * 5. A burst of concurrent turns on a server process with the default interpreter ceiling: do all finish,
 *    how many interpreters were alive at most, and the peak RSS of the server and its sandboxes.
 *
 *   bun bench/turns.ts [--steps 300] [--turns 10] [--burst 20] [--parts 1,2,3,4,5]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadPyodide } from "pyodide";
import { parseCli } from "../server/config/cli.ts";
import { createEnvSource } from "../server/config/env.ts";
import { loadConfig } from "../server/config/index.ts";
import { startServer } from "../server/lifecycle.ts";
import { silentLogger } from "../server/log.ts";
import { Interpreter } from "../server/sandbox/interpreter.ts";
import { InterpreterPool } from "../server/sandbox/interpreter-pool.ts";
import { pyodideDir, sandboxCommand } from "../server/sandbox/isolation.ts";
import { coldStart, rssMiB } from "./lib/process.ts";
import { fmt, median, percentile } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    steps: { type: "string", default: "300" },
    turns: { type: "string", default: "10" },
    burst: { type: "string", default: "20" },
    parts: { type: "string", default: "1,2,3,4,5" },
  },
});
const steps = Number(values.steps);
const turns = Number(values.turns);
const burstSize = Number(values.burst);
const repo = join(import.meta.dir, "..");

async function stepRoundTrip() {
  const pool = new InterpreterPool({ warm: 1 });
  await pool.warm();
  const py = await pool.acquire();
  await py.init([], {}, 10_000);
  const bare = await loadPyodide({ indexURL: `${pyodideDir()}/`, stdout: () => {}, stderr: () => {} });
  const sandboxed: number[] = [];
  const inProcess: number[] = [];
  for (let i = 0; i < 20; i++) {
    await py.run("x = 1", { timeoutMs: 10_000 });
    bare.runPython("x = 1");
  }
  // Interleaved, so both see the same machine load.
  for (let i = 0; i < steps; i++) {
    let t0 = performance.now();
    await py.run("x = 1", { timeoutMs: 10_000 });
    sandboxed.push(performance.now() - t0);
    t0 = performance.now();
    bare.runPython("x = 1");
    inProcess.push(performance.now() - t0);
  }
  pool.release(py);
  pool.close();
  const s = median(sandboxed);
  const b = median(inProcess);
  console.log(`Python step round trip, trivial code (median of ${steps}, interleaved):`);
  console.log(`  bare pyodide runPython in process   ${fmt(b, 3)} ms`);
  console.log(
    `  warm sandboxed interpreter          ${fmt(s, 3)} ms (p95 ${fmt(percentile(sandboxed, 95), 3)} ms)   ratio ${fmt(s / Math.max(b, 0.001), 1)}   overhead ${fmt(s - b, 3)} ms (aim < 5 ms)`,
  );
}

async function coldInterpreter(runs = 3) {
  const command = sandboxCommand(new InterpreterPool({ warm: 0 }).isolation);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const interpreter = new Interpreter(command);
    await interpreter.ready;
    times.push(performance.now() - t0);
    interpreter.kill();
  }
  console.log(
    `Cold interpreter start (spawn → pyodide ready): median ${fmt(median(times))} ms over ${runs} (hidden by the warm pool)`,
  );
}

async function turnOpen() {
  const data = mkdtempSync(join(tmpdir(), "atrium-bench-turns-"));
  const cli = parseCli(["--port", "0", "--data-dir", data], {}, repo);
  if (cli.kind !== "serve") throw new Error("unexpected CLI result");
  const env = createEnvSource({ APP_SANDBOX_WARM: "2" });
  const server = await startServer({ config: loadConfig(cli.options, env), env, log: silentLogger });
  try {
    const session = (await (
      await fetch(`${server.url}/api/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "bench" }),
      })
    ).json()) as { id: string };
    const open: number[] = [];
    const whole: number[] = [];
    for (let i = 0; i < turns; i++) {
      // Let the pool refill: this measures a turn that finds a warm interpreter, as the pool intends.
      while ((server.family("turns").runtime.sandbox.pool?.readyCount ?? 0) < 1) await Bun.sleep(50);
      const t0 = performance.now();
      const response = await fetch(`${server.url}/api/sessions/${session.id}/turns`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
        body: JSON.stringify({ text: "```python\nprint(1)\n```" }),
      });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let seen = "";
      let opened = 0;
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        seen += new TextDecoder().decode(r.value);
        if (!opened && seen.includes("event: turn_start")) opened = performance.now() - t0;
      }
      open.push(opened);
      whole.push(performance.now() - t0);
    }
    console.log(
      `Turn open → turn_start (warm pool, offline model): median ${fmt(median(open), 1)} ms; whole one-step turn to [DONE]: median ${fmt(median(whole), 1)} ms (${turns} turns)`,
    );
  } finally {
    await server.stop();
    rmSync(data, { recursive: true, force: true });
  }
}

/** A process and all its descendants (the server, bubblewrap, the sandboxes). */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1]?.split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {}
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i] as number) ?? []));
  return out;
}

const treeRss = (root: number) =>
  processTree(root).reduce((sum, pid) => {
    try {
      return sum + rssMiB(pid);
    } catch {
      return sum;
    }
  }, 0);

/** Interpreter processes under a server (the sandbox subcommand, not its bubblewrap parent). */
const interpreters = (root: number) =>
  processTree(root).filter((pid) => {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      return cmd.includes("sandbox") && !cmd[0]?.endsWith("bwrap");
    } catch {
      return false;
    }
  }).length;

async function post(url: string, path: string, body: unknown, key?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key) headers["idempotency-key"] = key;
  return fetch(`${url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
}

/** A new session with one turn running `code` (a Python block), its response unread. */
async function pythonTurn(url: string, title: string, code: string) {
  const session = (await (await post(url, "/api/sessions", { title })).json()) as { id: string };
  return post(
    url,
    `/api/sessions/${session.id}/turns`,
    { text: `\`\`\`python\n${code}\n\`\`\`` },
    crypto.randomUUID(),
  );
}

/** Reads a turn stream to its end: time to turn_start, to [DONE], and the events seen. */
async function followTurn(response: Response, t0: number) {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let seen = "";
  let opened = 0;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    seen += decoder.decode(r.value, { stream: true });
    if (!opened && seen.includes("event: turn_start")) opened = performance.now() - t0;
  }
  return { opened, done: performance.now() - t0, text: seen };
}

/**
 * The first turn right after a server process is ready, timed from its first 200 of /health/ready: on a
 * fresh data dir (the interpreters' snapshot is made first), then after a restart over the same data dir
 * (the snapshot is in its cache, as on every start but the first). Aim: ready within 1 s of /health/ready.
 */
async function firstTurnAfterStart() {
  const data = mkdtempSync(join(tmpdir(), "atrium-bench-first-"));
  try {
    for (const start of ["fresh data dir, snapshot made", "restart, snapshot cached"]) {
      const server = await coldStart([process.execPath, join(repo, "server", "main.ts")], repo, data);
      try {
        // From the first 200 of /health/ready (coldStart returns as it sees it).
        const t0 = performance.now();
        const turn = await followTurn(await pythonTurn(server.url, "first", "print(1)"), t0);
        const heartbeats = turn.text.split("event: turn_status").length - 1;
        const completed = turn.text.includes('"status":"completed"');
        console.log(
          `First turn after a server start (${start}; ready in ${fmt(server.readyMs)} ms): turn_start ${fmt(turn.opened)} ms after /health/ready, [DONE] ${fmt(turn.done)} ms after (${completed ? "completed" : "NOT completed"}; aim ≤ 1,000 ms idle), ${heartbeats} preparation status event(s)`,
        );
      } finally {
        server.proc.kill("SIGTERM");
        await server.proc.exited;
      }
    }
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

async function burst(n: number) {
  const data = mkdtempSync(join(tmpdir(), "atrium-bench-burst-"));
  const server = await coldStart([process.execPath, join(repo, "server", "main.ts")], repo, data);
  let peakRss = 0;
  let peakInterpreters = 0;
  const watch = setInterval(() => {
    peakRss = Math.max(peakRss, treeRss(server.proc.pid));
    peakInterpreters = Math.max(peakInterpreters, interpreters(server.proc.pid));
  }, 100);
  try {
    const t0 = performance.now();
    const results = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        return followTurn(await pythonTurn(server.url, `burst ${i}`, "print(sum(range(10**6)))"), t0);
      }),
    );
    const finished = results.filter((r) => r.text.includes('"status":"completed"')).length;
    const waited = results.filter((r) => r.text.includes("waiting for a sandbox")).length;
    const places = results.flatMap((r) =>
      [...r.text.matchAll(/place (\d+) in line/g)].map((m) => Number(m[1])),
    );
    console.log(
      `Burst of ${n} concurrent one-step turns on a server process (default ceiling): ${finished}/${n} completed in ${fmt(Math.max(...results.map((r) => r.done)))} ms; ${waited} waited in line (deepest place ${Math.max(0, ...places)}); at most ${peakInterpreters} interpreters alive; peak RSS of server + sandboxes ${fmt(peakRss)} MiB; median turn_start ${fmt(median(results.map((r) => r.opened)))} ms`,
    );
  } finally {
    clearInterval(watch);
    server.proc.kill("SIGTERM");
    await server.proc.exited;
    rmSync(data, { recursive: true, force: true });
  }
}

const parts = new Set(values.parts.split(",").map((p) => p.trim()));
if (parts.has("1")) await stepRoundTrip();
if (parts.has("2")) await coldInterpreter();
if (parts.has("3")) await turnOpen();
if (parts.has("4")) await firstTurnAfterStart();
if (parts.has("5") && burstSize > 0) await burst(burstSize);
process.exit(0);
