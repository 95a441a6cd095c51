/**
 * The sandbox subprocess (`atrium sandbox --pyodide DIR`): one pyodide interpreter, started by the
 * server with an empty environment (under bubblewrap on Linux), speaking the JSON-lines protocol of
 * protocol.ts on stdin/stdout.
 *
 * Everything is synchronous on purpose: the loop blocks reading stdin, and a host tool called from Python
 * writes its request and blocks reading the reply, so Python sees ordinary functions. The server owns
 * time: it kills this process when a step runs past its limit.
 */
import { readSync, writeSync } from "node:fs";
import { loadPyodide } from "pyodide";
import prelude from "./prelude.py" with { type: "text" };
import type { HostMessage, SandboxMessage } from "./protocol.ts";

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
  const bytes = Buffer.from(`${JSON.stringify(message)}\n`);
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(1, bytes, offset);
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

export async function main(argv: string[]): Promise<number> {
  const at = argv.indexOf("--pyodide");
  const indexURL = at !== -1 ? argv[at + 1] : undefined;
  if (!indexURL) {
    process.stderr.write("sandbox: --pyodide DIR is required\n");
    return 2;
  }
  watchParent();
  // jsglobals: an empty object, so `import js` reaches nothing of this process. Emscripten otherwise
  // names the program after this script's path on the host, in sys.executable and in the `_` variable:
  // a neutral name instead, and `_` left out (a value set to undefined is dropped from the environment).
  const pyodide = await loadPyodide({
    indexURL: indexURL.endsWith("/") ? indexURL : `${indexURL}/`,
    jsglobals: {},
    _sysExecutable: "python",
    env: { HOME: "/home/pyodide", _: undefined } as unknown as Record<string, string>,
    stdout: () => {},
    stderr: () => {},
  });
  pyodide.registerJsModule("_atrium_host", { call: callHost });
  pyodide.runPython(prelude);
  const run = pyodide.globals.get("_run") as (code: string) => string;
  const init = pyodide.globals.get("_init") as (tools: string, vars: string, limit: number) => void;
  send({ type: "ready", python: pyodide.runPython("import sys; sys.version.split()[0]") as string });

  for (let line = readLine(); line !== undefined; line = readLine()) {
    if (!line.trim()) continue;
    const message = JSON.parse(line) as HostMessage;
    if (message.type === "init") {
      init(JSON.stringify(message.tools), JSON.stringify(message.vars), message.outputLimit);
      send({ type: "initialized" });
    } else if (message.type === "run") {
      send({ type: "result", id: message.id, result: JSON.parse(run(message.code)) });
    }
  }
  return 0;
}
