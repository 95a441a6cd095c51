/**
 * Starts the server as its own process (as a user would) and reads its first line, `listening on URL`;
 * the line after it (UI, Swagger UI, data dir) and anything later is `laterStdout`.
 */
import { join } from "node:path";
import type { Subprocess } from "bun";
import { REPO_ROOT } from "./app.ts";
import { TEST_SNAPSHOT_DIR } from "./sandbox-pools.ts";
import { waitFor } from "./wait.ts";

export const MAIN = join(REPO_ROOT, "server", "main.ts");

export interface ServerProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  /** The first stdout line, with its newline: the listening line. */
  stdout: string;
  /** Whatever the process prints to stdout after that line, until it exits. */
  laterStdout: Promise<string>;
  stderr(): Promise<string>;
  exited: Promise<number>;
}

/**
 * A minimal environment: the developer's variables (keys, modes) must not leak into a test. No warm
 * Python interpreters (a server warms its pool once listening): tests that run turns pass
 * APP_SANDBOX_WARM themselves. The interpreters' snapshot comes from the run's shared cache.
 */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    APP_SANDBOX_WARM: "0",
    APP_SANDBOX_SNAPSHOT_DIR: TEST_SNAPSHOT_DIR,
    ...extra,
  };
}

export interface SpawnOptions {
  env?: Record<string, string>;
  /** A script run with this Bun instead of server/main.ts. */
  entry?: string;
  /** An executable run instead of Bun (the compiled server). */
  binary?: string;
}

export function spawn(args: string[], options: SpawnOptions = {}) {
  const command = options.binary ? [options.binary] : [process.execPath, options.entry ?? MAIN];
  return Bun.spawn([...command, ...args], {
    cwd: REPO_ROOT,
    env: cleanEnv(options.env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

/** Waits for a process spawned with piped stdout and stderr to end; its exit code and both outputs. */
export async function finished(proc: {
  exited: Promise<number>;
  stdout: ReadableStream<Uint8Array>;
  stderr: ReadableStream<Uint8Array>;
}): Promise<{ code: number; stdout: string; stderr: string }> {
  const [code, stdout, stderr] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  return { code, stdout, stderr };
}

export async function startServerProcess(args: string[], options: SpawnOptions = {}): Promise<ServerProcess> {
  const proc = spawn(args, options);
  const stderrText = new Response(proc.stderr).text();
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let stdout = "";
  while (!stdout.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited before listening: ${await stderrText}`);
    stdout += decoder.decode(value);
  }
  const newline = stdout.indexOf("\n");
  const first = stdout.slice(0, newline + 1);
  const pending = stdout.slice(newline + 1);
  stdout = first;
  const laterStdout = (async () => {
    let rest = pending;
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += decoder.decode(r.value);
    return rest;
  })();
  const match = stdout.match(/^listening on (http:\/\/\S+)\n$/);
  if (!match?.[1]) throw new Error(`unexpected first output: ${JSON.stringify(stdout)}`);
  return { proc, url: match[1], stdout, laterStdout, stderr: () => stderrText, exited: proc.exited };
}

/** Polls until the URL answers 200 (or the deadline passes). */
export async function waitForOk(url: string, deadlineMs = 10_000): Promise<void> {
  const ok = () =>
    fetch(url).then(
      (r) => r.ok,
      () => false,
    );
  await waitFor(ok, { timeoutMs: deadlineMs, what: `${url} to answer 200` });
}
