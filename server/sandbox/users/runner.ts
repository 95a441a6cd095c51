/**
 * The command runner: the first process of a user's long-lived sandbox (local-sandbox.ts starts it in
 * the jail with the server's own Bun). It speaks JSON lines with the host over its stdin/stdout pipes
 * and nothing else: no socket, no file the host reads. Self-contained (node built-ins only), because
 * only this file and the runtime are bound into the jail.
 *
 * host → runner  {t:"x", id, c}  run `bash -c c` in its own process group, in the working dir
 *                {t:"x", id, c, i:1}  the same with its stdin piped and stderr dropped (a long-lived
 *                                server the host talks to over stdin/stdout, like an MCP stdio server)
 *                {t:"i", id, d}  bytes (base64) for that command's stdin;  {t:"ie", id}  close it
 *                {t:"k", id}     kill that command's process group
 *                {t:"o", id, p}  open a TCP connection to 127.0.0.1:p inside the jail (previews)
 *                {t:"d", id, d}  bytes (base64) for connection id;  {t:"e", id}  end it
 * runner → host  {t:"r"} ready;  {t:"out", id, d} command output;  {t:"x", id, code, sig} it exited
 *                {t:"ok", id} connected;  {t:"d", id, d} bytes;  {t:"e", id} closed (or refused)
 *
 * A command's background processes (`server &`) outlive it: the jail's init reaps them, and their
 * output is read and dropped once the command has exited. When the host's pipe is full, every output
 * source pauses until it drains, so a flood of output costs neither side memory.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { createInterface } from "node:readline";

/** Output after a command's exit is still forwarded this long (the pipes' last bytes). */
const EXIT_GRACE_MS = 100;

interface Source {
  pause(): void;
  resume(): void;
}

export function runCommandRunner(): void {
  const commands = new Map<number, ChildProcess>();
  const connections = new Map<number, Socket>();
  const sources = new Set<Source>();
  let blocked = false;

  const send = (message: object) => {
    if (process.stdout.write(`${JSON.stringify(message)}\n`) || blocked) return;
    blocked = true;
    for (const source of sources) source.pause();
    process.stdout.once("drain", () => {
      blocked = false;
      for (const source of sources) source.resume();
    });
  };
  const track = (source: Source & { once(event: "close", f: () => void): unknown }) => {
    sources.add(source);
    if (blocked) source.pause();
    source.once("close", () => sources.delete(source));
  };

  const run = (id: number, command: string, interactive: boolean) => {
    const child = spawn("/bin/bash", ["-c", command], {
      detached: true,
      stdio: interactive ? ["pipe", "pipe", "ignore"] : ["ignore", "pipe", "pipe"],
    });
    child.stdin?.on("error", () => {});
    commands.set(id, child);
    let done = false;
    let open = 2;
    const finish = (code: number | null, sig: string | null) => {
      if (done) return;
      done = true;
      commands.delete(id);
      send({ t: "x", id, code, sig });
    };
    let exit: [number | null, string | null] | undefined;
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      track(stream);
      stream.on("data", (chunk: Buffer) => {
        if (!done) send({ t: "out", id, d: chunk.toString("base64") });
      });
      stream.once("close", () => {
        open -= 1;
        if (open === 0 && exit) finish(...exit);
      });
    }
    child.once("error", () => finish(127, null));
    child.once("exit", (code, sig) => {
      exit = [code, sig];
      if (open === 0) finish(code, sig);
      else setTimeout(() => finish(code, sig), EXIT_GRACE_MS);
    });
  };

  const kill = (id: number) => {
    const child = commands.get(id);
    if (!child?.pid) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  };

  const openConnection = (id: number, port: number) => {
    const socket = connect({ host: "127.0.0.1", port });
    connections.set(id, socket);
    track(socket);
    socket.on("connect", () => send({ t: "ok", id }));
    socket.on("data", (chunk: Buffer) => send({ t: "d", id, d: chunk.toString("base64") }));
    socket.on("error", () => {});
    socket.once("close", () => {
      connections.delete(id);
      send({ t: "e", id });
    });
  };

  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on("line", (line) => {
    let m: { t?: unknown; id?: unknown; c?: unknown; p?: unknown; d?: unknown; i?: unknown };
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof m.id !== "number") return;
    if (m.t === "x" && typeof m.c === "string") run(m.id, m.c, m.i === 1);
    else if (m.t === "k") kill(m.id);
    else if (m.t === "o" && typeof m.p === "number") openConnection(m.id, m.p);
    else if (m.t === "d" && typeof m.d === "string") connections.get(m.id)?.write(Buffer.from(m.d, "base64"));
    else if (m.t === "e") connections.get(m.id)?.end();
    else if (m.t === "i" && typeof m.d === "string")
      commands.get(m.id)?.stdin?.write(Buffer.from(m.d, "base64"));
    else if (m.t === "ie") commands.get(m.id)?.stdin?.end();
  });
  // The host went away: the sandbox ends with it.
  lines.on("close", () => process.exit(0));
  send({ t: "r" });
}

/** The `sandbox-runner` subcommand of a compiled binary (commands.ts). */
export async function sandboxRunnerMain(): Promise<number> {
  runCommandRunner();
  return new Promise<number>(() => {});
}

if (import.meta.main) runCommandRunner();
