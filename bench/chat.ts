/**
 * Chat streaming speed. A child process serves the full app with pi-ai faux models, next to a bare
 * Bun.serve that writes the same NDJSON lines one chunk per line (the reference). Prints:
 *  - time from request to the `start` line (fresh session each time: opens a pi session);
 *  - a 10,000-delta turn: time per streamed event through Atrium vs the bare stream (ratio), in
 *    interleaved rounds;
 *  - 200 concurrent chat streams in one process: all complete, none errors, RSS before and after.
 *
 *   bun bench/chat.ts [--rounds 3] [--starts 30] [--concurrent 200]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";
import {
  AuthStorage,
  createAgentSession,
  ModelRegistry,
  SessionManager,
  SettingsManager,
} from "@mariozechner/pi-coding-agent";
import { parseCli } from "../server/config/cli.ts";
import { createEnvSource } from "../server/config/env.ts";
import { loadConfig } from "../server/config/index.ts";
import { startServer } from "../server/lifecycle.ts";
import { silentLogger } from "../server/log.ts";
import { rssMiB } from "./lib/process.ts";
import { fmt, median } from "./lib/stats.ts";

const DELTAS = 10_000;
const repo = join(import.meta.dir, "..");

/** Child: the app with two faux models (a 10,000-delta one and a short one) and the bare reference. */
async function serve() {
  const data = mkdtempSync(join(tmpdir(), "atrium-bench-chat-"));
  const cli = parseCli(["--port", "0", "--data-dir", data], {}, repo);
  if (cli.kind !== "serve") throw new Error("bad bench arguments");
  const env = createEnvSource({});
  const app = await startServer({ config: loadConfig(cli.options, env), env, log: silentLogger });
  // tokenSize 1 = 4 characters per delta: 40,000 characters stream as 10,000 deltas.
  const long = registerFauxProvider({
    provider: "benchlong",
    models: [{ id: "m" }],
    tokenSize: { min: 1, max: 1 },
  });
  const short = registerFauxProvider({
    provider: "benchshort",
    models: [{ id: "m" }],
    tokenSize: { min: 1, max: 1 },
  });
  const longReply = fauxAssistantMessage("abcd".repeat(DELTAS));
  const shortReply = fauxAssistantMessage("ok ".repeat(40));
  long.setResponses(Array.from({ length: 50 }, () => () => longReply));
  short.setResponses(Array.from({ length: 2000 }, () => () => shortReply));
  app.ctx.models.register(long.getModel());
  app.ctx.models.register(short.getModel());

  // Record one real stream; the reference writes exactly these lines.
  const response = await fetch(`${app.url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: "go", model: "benchlong/m" }),
  });
  const lines = (await response.text())
    .split("\n")
    .filter(Boolean)
    .map((l) => `${l}\n`);
  const encoder = new TextEncoder();
  const raw = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      let i = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            const line = lines[i++];
            if (line === undefined) controller.close();
            else controller.enqueue(encoder.encode(line));
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { headers: { "content-type": "application/x-ndjson" } });
    },
  });
  console.log(JSON.stringify({ app: app.port, raw: raw.port, pid: process.pid }));
  process.on("SIGTERM", () => {
    void app.stop().finally(() => {
      rmSync(data, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

async function readStream(
  url: string,
  body: unknown,
): Promise<{ events: number; startMs: number; totalMs: number; last: string }> {
  const started = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.body) throw new Error("no body");
  const decoder = new TextDecoder();
  let buffer = "";
  let events = 0;
  let startMs = 0;
  let last = "";
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let at = buffer.indexOf("\n");
    while (at !== -1) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      if (events === 0) startMs = performance.now() - started;
      events++;
      last = line;
      at = buffer.indexOf("\n");
    }
  }
  return { events, startMs, totalMs: performance.now() - started, last };
}

/** The same 10,000-delta turn in a bare in-memory pi session, no HTTP: what the runtime itself costs. */
async function piAlone(rounds: number): Promise<number> {
  const faux = registerFauxProvider({
    provider: "benchpi",
    models: [{ id: "m" }],
    tokenSize: { min: 1, max: 1 },
  });
  faux.setResponses(Array.from({ length: rounds }, () => fauxAssistantMessage("abcd".repeat(DELTAS))));
  const auth = AuthStorage.inMemory();
  auth.setRuntimeApiKey("benchpi", "unused");
  const agentDir = mkdtempSync(join(tmpdir(), "atrium-bench-pi-"));
  const { session } = await createAgentSession({
    cwd: agentDir,
    agentDir,
    authStorage: auth,
    modelRegistry: ModelRegistry.inMemory(auth),
    model: faux.getModel(),
    sessionManager: SessionManager.inMemory(),
    settingsManager: SettingsManager.inMemory(),
  });
  let events = 0;
  session.subscribe(() => events++);
  const perEvent: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const before = events;
    const started = performance.now();
    await session.prompt("go");
    perEvent.push((performance.now() - started) / (events - before));
  }
  session.dispose();
  rmSync(agentDir, { recursive: true, force: true });
  return median(perEvent) * 1000;
}

async function main() {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "3" },
      starts: { type: "string", default: "30" },
      concurrent: { type: "string", default: "200" },
    },
  });
  const child = Bun.spawn([process.execPath, import.meta.path, "--serve"], {
    cwd: repo,
    stdout: "pipe",
    stderr: "inherit",
    env: { PATH: process.env.PATH ?? "", HOME: tmpdir() },
  });
  const first = new TextDecoder().decode((await child.stdout.getReader().read()).value);
  const ports = JSON.parse(first) as { app: number; raw: number; pid: number };
  const chatUrl = `http://127.0.0.1:${ports.app}/api/chat`;
  const rawUrl = `http://127.0.0.1:${ports.raw}/`;
  try {
    const starts: number[] = [];
    for (let i = 0; i < Number(values.starts); i++) {
      starts.push((await readStream(chatUrl, { message: "hi", model: "benchshort/m" })).startMs);
    }
    console.log(
      `Request to first line (start), fresh session each: median ${fmt(median(starts), 2)} ms over ${starts.length} requests`,
    );

    const app: number[] = [];
    const raw: number[] = [];
    let count = 0;
    for (let round = 0; round < Number(values.rounds); round++) {
      const r = await readStream(rawUrl, {});
      raw.push(r.totalMs / r.events);
      const a = await readStream(chatUrl, { message: "go", model: "benchlong/m" });
      if (!a.last.includes('"type":"done"'))
        throw new Error(`the long stream did not end with done: ${a.last.slice(0, 200)}`);
      app.push(a.totalMs / a.events);
      count = a.events;
    }
    const perApp = median(app) * 1000;
    const perRaw = median(raw) * 1000;
    const perPi = await piAlone(Number(values.rounds));
    console.log(
      `Stream of ${fmt(count)} events (${fmt(DELTAS)} deltas), ${values.rounds} interleaved rounds, median time per event:`,
    );
    console.log(
      `  bare Bun.serve ${fmt(perRaw, 2)} µs   Atrium over HTTP ${fmt(perApp, 2)} µs   ratio ${fmt(perApp / perRaw, 1)}`,
    );
    console.log(
      `  of which the pi session itself (in memory, no HTTP, same faux turn) ${fmt(perPi, 2)} µs: Atrium's own overhead (mapping, mirror, NDJSON, HTTP) ≈ ${fmt(Math.max(0, perApp - perPi), 2)} µs/event`,
    );

    const n = Number(values.concurrent);
    const before = rssMiB(ports.pid);
    const started = performance.now();
    const results = await Promise.allSettled(
      Array.from({ length: n }, () => readStream(chatUrl, { message: "hi", model: "benchshort/m" })),
    );
    const wall = performance.now() - started;
    const after = rssMiB(ports.pid);
    const done = results.filter(
      (r) => r.status === "fulfilled" && r.value.last.includes('"type":"done"'),
    ).length;
    console.log(
      `${n} concurrent chat streams: ${done} done, ${n - done} failed, ${fmt(wall)} ms wall; RSS ${fmt(before, 1)} MiB before, ${fmt(after, 1)} MiB after`,
    );
    if (done !== n) process.exitCode = 1;
  } finally {
    child.kill("SIGTERM");
    await child.exited;
  }
}

if (process.argv.includes("--serve")) await serve();
else await main();
