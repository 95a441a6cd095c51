/**
 * The sandbox subprocess (`atrium sandbox --pyodide DIR`): one pyodide interpreter, started by the
 * server with an empty environment (under bubblewrap on Linux), speaking the JSON-lines protocol of
 * protocol.ts on stdin/stdout.
 *
 * Started with `--snapshot-fd N`, it restores the interpreters' memory snapshot (snapshot.ts) instead of
 * loading pyodide from scratch: the same interpreter, ready in a fraction of the time. With
 * `--make-snapshot` it makes that snapshot instead and writes it to stdout.
 *
 * Everything is synchronous on purpose: the loop blocks reading stdin, and a host tool called from Python
 * writes its request and blocks reading the reply, so Python sees ordinary functions. The server owns
 * time: it kills this process when a step runs past its limit.
 */
import { closeSync, fstatSync, readSync, writeSync } from "node:fs";
import prelude from "./prelude.py" with { type: "text" };
import type { HostMessage, SandboxMessage, StartReport } from "./protocol.ts";
import { PyodideLoader } from "./pyodide-start.ts";

const decoder = new TextDecoder();
let pending = "";
const chunk = new Uint8Array(64 * 1024);

/** The next line of stdin, or undefined at end of input. Blocks. */
function readLine(): string | undefined {
  for (;;) {
    const at = pending.indexOf("\n");
    if (at !== -1) {
      const line = pending.slice(0, at);
      pending = pending.slice(at + 1);
      return line;
    }
    let n: number;
    try {
      n = readSync(0, chunk, 0, chunk.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") continue;
      throw error;
    }
    if (n === 0) return undefined;
    pending += decoder.decode(chunk.subarray(0, n), { stream: true });
  }
}

function send(message: SandboxMessage): void {
  writeAll(Buffer.from(`${JSON.stringify(message)}\n`));
}

/** The step running now: what it prints is sent as output of this id. */
let running = 0;

/** Printed text of the running step, sent while it runs (prelude.py `_Bounded` decides when). */
function sendOutput(stream: string, text: string): void {
  if (stream !== "stdout" && stream !== "stderr") return;
  send({ type: "output", id: running, stream, text: String(text) });
}

let nextCallId = 0;

/** A host tool call from Python: write the request, block until its reply. Returns a JSON string. */
function callHost(name: string, argsJson: string): string {
  const callId = ++nextCallId;
  let args: unknown[];
  try {
    args = JSON.parse(argsJson) as unknown[];
  } catch {
    return JSON.stringify({ error: "arguments must be JSON-serialisable" });
  }
  send({ type: "tool_call", callId, name, args });
  for (;;) {
    const line = readLine();
    if (line === undefined) process.exit(0);
    const message = JSON.parse(line) as HostMessage;
    if (message.type === "tool_result" && message.callId === callId) {
      return JSON.stringify(
        message.error !== undefined ? { error: message.error } : { result: message.result },
      );
    }
  }
}

/**
 * Dies with the server even without bubblewrap's --die-with-parent (macOS, Windows, isolation "none"):
 * the main thread may be stuck in Python, so a worker thread watches for the parent to go away.
 */
function watchParent(): void {
  const source = `const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) process.kill(process.pid, "SIGKILL"); }, 500);`;
  new Worker(URL.createObjectURL(new Blob([source], { type: "application/javascript" })));
}

/** Writes all of `bytes` to stdout (a pipe: writes may be partial). */
function writeAll(bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(1, bytes, offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
    }
  }
}

/**
 * `--make-snapshot`: pyodide loaded and the prelude run, before any user code, then the interpreter's
 * whole memory written to stdout for the server to cache. Nothing of a user is in it.
 */
async function makeSnapshot(loader: PyodideLoader): Promise<number> {
  const pyodide = await loader.load({ _makeSnapshot: true });
  pyodide.runPython(prelude);
  writeAll(pyodide.makeMemorySnapshot());
  return 0;
}

/**
 * The interpreter: restored from the snapshot when one is given and loads (pyodide refuses a snapshot of
 * another build), else loaded from scratch with the prelude run.
 */
async function start(loader: PyodideLoader, snapshotFd: number | undefined) {
  if (snapshotFd !== undefined) {
    try {
      const pyodide = await loader.load({ _loadSnapshot: readDescriptor(snapshotFd) });
      return { pyodide, snapshot: true };
    } catch {
      // Started from scratch instead; the server sees `snapshot: false` and stops using this one.
    }
  }
  const pyodide = await loader.load({});
  pyodide.runPython(prelude);
  return { pyodide, snapshot: false };
}

/**
 * The whole file behind the inherited descriptor `fd`, read by position (the server shares one open file
 * between starts), then closed: no code that runs later in this process holds it.
 */
function readDescriptor(fd: number): Uint8Array {
  try {
    const bytes = new Uint8Array(fstatSync(fd).size);
    let at = 0;
    while (at < bytes.length) {
      const n = readSync(fd, bytes, at, bytes.length - at, at);
      if (n === 0) throw new Error("the snapshot ended early");
      at += n;
    }
    return bytes;
  } finally {
    closeSync(fd);
  }
}

function flag(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at !== -1 ? argv[at + 1] : undefined;
}

export async function interpreterWorkerMain(argv: string[]): Promise<number> {
  const indexURL = flag(argv, "--pyodide");
  if (!indexURL) {
    process.stderr.write("sandbox: --pyodide DIR is required\n");
    return 2;
  }
  // First: pyodide's runtime compiles on a helper thread through everything below (pyodide-start.ts).
  const workerMs = performance.now();
  const loader = new PyodideLoader(indexURL);
  watchParent();
  if (argv.includes("--make-snapshot")) return makeSnapshot(loader);
  const fd = flag(argv, "--snapshot-fd");
  const { pyodide, snapshot } = await start(loader, fd === undefined ? undefined : Number(fd));
  const loadedMs = performance.now();
  pyodide.registerJsModule("_atrium_host", { call: callHost, output: sendOutput });
  if (snapshot) pyodide.runPython("_fresh()");
  const run = pyodide.globals.get("_run") as (code: string) => string;
  const init = pyodide.globals.get("_init") as (tools: string, vars: string, limit: number) => void;
  const python = pyodide.runPython("import sys; sys.version.split()[0]") as string;
  const report: StartReport = { ...loader.used, workerMs, loadedMs, readyMs: performance.now() };
  send({ type: "ready", python, snapshot, start: report });

  for (let line = readLine(); line !== undefined; line = readLine()) {
    if (!line.trim()) continue;
    const message = JSON.parse(line) as HostMessage;
    if (message.type === "init") {
      init(JSON.stringify(message.tools), JSON.stringify(message.vars), message.outputLimit);
      send({ type: "initialized" });
    } else if (message.type === "run") {
      running = message.id;
      send({ type: "result", id: message.id, result: JSON.parse(run(message.code)) });
    }
  }
  return 0;
}
