/**
 * Shell commands in the jail (the chat agent's `bash` tool in local mode): the same jail as turns'
 * Python (jail.ts), showing the owner's workspace read-write at its own path (the working dir and HOME)
 * and the system read-only, and nothing else: not the rest of the data dir (app.db, other owners, pi's
 * agent dir with its keys), not the checkout or its .env, not the host's /etc beyond what programs read
 * to run (no shadow, no private keys). No network unless the policy asks for egress (network.ts). The
 * workspace's `.pi/` stays read-only: pi loads extensions from there, and a command must not plant code
 * the server would run.
 *
 * `exec` has the contract of pi's BashOperations: output streamed to onData, "aborted" / "timeout:N"
 * rejections, the exit code otherwise.
 */
import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { Confinement } from "./confinement.ts";
import { type JailPlan, jailArgs } from "./jail.ts";
import type { SandboxLimits } from "./limits.ts";
import { attachPasta, findPasta, readJailPid, release } from "./network.ts";
import { processTree } from "./process-tree.ts";
import type { QuotaExceeded, QuotaWatch } from "./quota-watch.ts";

/** What programs read from /etc to run; never the whole of it (shadow, ssh host keys, ssl/private). */
export const ETC = [
  "/etc/alternatives",
  "/etc/bash.bashrc",
  "/etc/ca-certificates.conf",
  "/etc/debian_version",
  "/etc/gai.conf",
  "/etc/gitconfig",
  "/etc/group",
  "/etc/host.conf",
  "/etc/hosts",
  "/etc/inputrc",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/locale.alias",
  "/etc/localtime",
  "/etc/magic",
  "/etc/mime.types",
  "/etc/nsswitch.conf",
  "/etc/os-release",
  "/etc/passwd",
  "/etc/profile",
  "/etc/protocols",
  "/etc/resolv.conf",
  "/etc/services",
  "/etc/ssl/certs",
  "/etc/ssl/openssl.cnf",
  "/etc/timezone",
];

/** Variables a shell needs to behave normally; none of them carries a credential. */
const PASSED = ["LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"];
const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export interface ShellJail {
  plan: JailPlan;
  limits: SandboxLimits;
  network: "none" | "egress";
  confinement: Confinement;
  /** The workspace quota's watchdog: past the quota the command is stopped and fails with its message. */
  quota?: QuotaWatch;
}

export interface ExecOptions {
  onData: (data: Buffer) => void;
  signal?: AbortSignal;
  timeout?: number;
  env?: NodeJS.ProcessEnv;
}

/** The argv of one command in the jail; `network` asks for bubblewrap's info and block fds (3 and 4). */
export function shellCommandArgs(jail: ShellJail, workspaceDir: string, command: string, egress: boolean) {
  const workspace = realpathSync(workspaceDir);
  const pi = join(workspace, ".pi");
  // A mount point must exist: an empty .pi/ is what pi finds when a workspace has none.
  if (!existsSync(pi)) mkdirSync(pi);
  const env: Record<string, string> = { HOME: workspace, PATH, TMPDIR: "/tmp", SHELL: "/bin/bash" };
  for (const name of PASSED) if (process.env[name]) env[name] = process.env[name] as string;
  return jailArgs(jail.plan, jail.limits, {
    system: ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"],
    readOnly: [],
    readOnlyIfPresent: ETC,
    readWrite: [[workspace, workspace]],
    readOnlyWithin: [pi],
    tmpfs: ["/tmp", "/var/tmp", "/run"],
    chdir: workspace,
    env,
    ...(egress ? { infoFd: 3, blockFd: 4 } : {}),
    command: ["/bin/bash", "-c", command],
  });
}

export function jailedExec(jail: ShellJail, workspaceDir: string) {
  return async (
    command: string,
    _cwd: string,
    options: ExecOptions,
  ): Promise<{ exitCode: number | null }> => {
    const egress = jail.network === "egress" && findPasta() !== undefined;
    const args = shellCommandArgs(jail, workspaceDir, command, egress);
    const proc = Bun.spawn(args, {
      env: {},
      cwd: "/",
      stdio: egress ? ["ignore", "pipe", "pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe"],
    });
    let memory = false;
    jail.confinement.watch(proc.pid, () => {
      memory = true;
      proc.kill("SIGKILL");
    });
    let overQuota: QuotaExceeded | undefined;
    const unwatch = jail.quota?.watch(
      workspaceDir,
      (error) => {
        overQuota = error;
        proc.kill("SIGKILL");
      },
      () => processTree(proc.pid),
    );
    let reason: "aborted" | "timeout" | undefined;
    const stop = (why: "aborted" | "timeout") => {
      reason ??= why;
      proc.kill("SIGKILL");
    };
    const onAbort = () => stop("aborted");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    const timer =
      options.timeout && options.timeout > 0
        ? setTimeout(() => stop("timeout"), options.timeout * 1000)
        : undefined;
    let pasta: Bun.Subprocess | undefined;
    try {
      if (egress) {
        const [info, block] = [proc.stdio[3], proc.stdio[4]] as number[];
        const pid = await readJailPid(info as number);
        if (pid) pasta = await attachPasta(pid).catch(() => undefined);
        if (!pasta) options.onData(Buffer.from("[no network: the jail's egress could not be set up]\n"));
        release(block as number);
      }
      await Promise.all([pump(proc.stdout, options.onData), pump(proc.stderr, options.onData)]);
      await proc.exited;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      pasta?.kill("SIGKILL");
      unwatch?.();
      memory = jail.confinement.exited(proc.pid) === "memory" || memory;
    }
    if (overQuota) throw overQuota;
    if (reason === "aborted") throw new Error("aborted");
    if (reason === "timeout") throw new Error(`timeout:${options.timeout}`);
    if (memory) {
      const mib = Math.round(jail.limits.memoryBytes / 1024 / 1024);
      throw new Error(
        `The command used more than ${mib} MiB of memory (policy sandbox.memory_mb) and was stopped`,
      );
    }
    return { exitCode: proc.exitCode };
  };
}

async function pump(stream: ReadableStream<Uint8Array>, onData: (data: Buffer) => void): Promise<void> {
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) onData(Buffer.from(chunk));
}
