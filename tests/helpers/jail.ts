/**
 * Helpers for the jail tests: Python that runs JavaScript inside the sandbox through pyodide's bridge
 * (a JS function's constructor is JavaScript's Function, which reaches `process` and `bun:ffi`), the
 * checkout's content hash, and the processes of one sandbox as the host sees them.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { SandboxProvider } from "../../server/sandbox/users/provider-api.ts";
import { REPO_ROOT } from "./app.ts";

/** Python that runs `body` (a JS function body returning a value) and prints it as JSON. */
export function viaJs(body: string): string {
  return [
    "from pyodide.ffi import to_js",
    "F = to_js({}).constructor.constructor",
    `print(F(${JSON.stringify(`const out = (() => { ${body} })(); return JSON.stringify(out);`)})())`,
  ].join("\n");
}

/** SHA-256 over every tracked file of the checkout (path and content). */
export function checkoutHash(): string {
  const listed = Bun.spawnSync(["git", "ls-files", "-z"], { cwd: REPO_ROOT, stdout: "pipe" });
  const hash = createHash("sha256");
  for (const path of listed.stdout.toString().split("\0").filter(Boolean).sort()) {
    hash.update(path);
    try {
      hash.update(readFileSync(join(REPO_ROOT, path)));
    } catch {
      hash.update("<absent>");
    }
  }
  return hash.digest("hex");
}

/** Host pids of the processes under `pid` (its whole tree), from /proc. */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.pop() as number;
    try {
      for (const task of readdirSync(`/proc/${next}/task`)) {
        const children = readFileSync(`/proc/${next}/task/${task}/children`, "utf8").trim();
        for (const child of children ? children.split(" ").map(Number) : []) {
          out.push(child);
          queue.push(child);
        }
      }
    } catch {}
  }
  return out;
}

/** The host uid of a process. */
export function hostUid(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("Uid:"));
  return Number(line?.split(/\s+/)[1]);
}

/** Runs a command in the owner's long-lived sandbox; its whole output and exit code. */
export async function runIn(sandboxes: SandboxProvider, owner: string, command: string, timeout?: number) {
  let out = "";
  const { exitCode } = await sandboxes.exec(owner, command, {
    onData: (data) => {
      out += data.toString("utf8");
    },
    timeout,
  });
  return { out, exitCode };
}
