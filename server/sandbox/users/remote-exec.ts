/**
 * Runs one shell command in a remote sandbox with pi's BashOperations contract: output streamed to
 * `onData` as it grows, the exit code at the end, rejection `aborted` when the caller's signal fires and
 * `timeout:<s>` when the time limit passes; either way the command is killed on the provider.
 *
 * Daytona's toolbox has no streaming call over plain HTTP (its log follow is a WebSocket), so the command
 * runs asynchronously in a fresh toolbox session and is polled: the command's exit code, then its log
 * (combined stdout and stderr, in order, since we send no SDK version header), emitting the bytes past
 * what was already sent. The exit code is written only after the log is flushed, so the log read after
 * an exit code is seen is complete. Deleting the session kills the command's whole process group, which
 * is how an abort or a timeout stops it; a fresh session per command means no shell state (cwd,
 * variables) leaks from one command into the next.
 */
import { randomUUID } from "node:crypto";
import type { SandboxExecOptions } from "./provider-api.ts";
import type { DaytonaClient } from "./remote-client.ts";

export interface RemoteCommand {
  client: DaytonaClient;
  key: string;
  /** The sandbox's toolbox base URL. */
  toolbox: string;
  /** The working directory (the sandbox's workspace). */
  cwd: string;
  command: string;
  pollIntervalMs: number;
  /** Fires when the caller aborts or the time limit passes; its reason is `aborted` or `timeout`. */
  stop: AbortSignal;
}

/** Single-quotes a string for a POSIX shell. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The line the toolbox session runs. The toolbox sources the command into its session shell, where an
 * `exit` would end the session before it records an exit code, so the command runs in its own shell
 * (bash, as pi's tool expects, or sh where an image has no bash), inside the workspace.
 */
export function sessionLine(cwd: string, command: string): string {
  return `cd ${shellQuote(cwd)} && "$(command -v bash || echo sh)" -c ${shellQuote(command)}`;
}

/** Runs the command; resolves with its exit code, rejects `aborted` / `timeout` via `stop`'s reason. */
export async function runRemoteCommand(
  run: RemoteCommand,
  onData: SandboxExecOptions["onData"],
): Promise<{ exitCode: number | null }> {
  const { client, key, toolbox, stop } = run;
  const session = `atrium-${randomUUID()}`;
  await client.call(key, "POST", `${toolbox}/process/session`, {
    json: { sessionId: session },
    signal: stop,
  });
  const base = `${toolbox}/process/session/${session}`;
  try {
    const started = await client.json<{ cmdId?: string }>(key, "POST", `${base}/exec`, {
      json: { command: sessionLine(run.cwd, run.command), runAsync: true },
      signal: stop,
    });
    const cmdId = started?.cmdId;
    if (!cmdId) throw new Error(`The ${client.label} started the command but gave no command id`);
    const sent = new Map<string, number>();
    let pause = 25;
    for (;;) {
      const status = await client.json<{ exitCode?: number | null }>(key, "GET", `${base}/command/${cmdId}`, {
        signal: stop,
      });
      const logs = await client.call(key, "GET", `${base}/command/${cmdId}/logs`, { signal: stop });
      if (logs) emitNew(logs.type, logs.bytes, sent, onData);
      if (typeof status?.exitCode === "number") return { exitCode: status.exitCode };
      await sleep(pause, stop);
      pause = Math.min(pause * 2, run.pollIntervalMs);
    }
  } finally {
    // Ends the command (SIGTERM then SIGKILL to its process group) when it is still running, and frees
    // the session's files when it is not. Not awaited: an abort stops waiting at once.
    void client.call(key, "DELETE", base).catch(() => undefined);
  }
}

/**
 * Emits the part of each stream past what was already sent. The log is plain combined text; a daemon
 * that answers the JSON form instead has it split into `stdout` and `stderr`, each growing on its own.
 */
function emitNew(type: string, bytes: Uint8Array, sent: Map<string, number>, onData: (data: Buffer) => void) {
  const streams: [string, Uint8Array][] = [];
  if (type.includes("application/json")) {
    try {
      const parsed = JSON.parse(new TextDecoder().decode(bytes)) as { stdout?: string; stderr?: string };
      for (const name of ["stdout", "stderr"] as const)
        if (typeof parsed[name] === "string") streams.push([name, Buffer.from(parsed[name] as string)]);
    } catch {
      streams.push(["output", bytes]);
    }
  } else streams.push(["output", bytes]);
  for (const [name, data] of streams) {
    const from = sent.get(name) ?? 0;
    if (data.length > from) {
      onData(Buffer.from(data.subarray(from)));
      sent.set(name, data.length);
    }
  }
}

/** Waits `ms`, or less when `signal` fires (then rejects with its reason). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
