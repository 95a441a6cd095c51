/**
 * The command line that starts a user's long-lived sandbox: the jail of jail.ts (own user, pid, network,
 * ipc, uts namespaces; seccomp; every capability dropped; the policy's limits) around the command
 * runner (runner.ts) run by the server's own Bun, with the owner's workspace folder read-write at
 * `/home/atrium/agent-workspace`, its `.pi/` read-only, a private home, the system read-only.
 *
 * Started by root, the jail runs as the user's own real unprivileged host uid (setpriv, as turns'
 * interpreters: uids.ts; 65534 inside): host root inside a user namespace is still treated as root by
 * the kernel in places, and a uid shared with another user or another host daemon could reach the
 * sandbox's files through /proc/<pid>/root. bubblewrap then runs as that uid too and could not reach the
 * workspace inside the root-only data dir, so a first step in a private mount namespace (util-linux
 * `unshare -m`, root only) binds what the jail shows onto a tmpfs at /mnt that only this namespace sees;
 * bubblewrap binds from there. The data dir's own modes never change, and the workspace folder is
 * handed to the user's uid before the jail starts (prepareWorkspace).
 */
import { existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, realpathSync, renameSync } from "node:fs";
import { join } from "node:path";
import { sourceRoot } from "../isolation.ts";
import { type JailPlan, jailArgs } from "../jail.ts";
import type { SandboxLimits } from "../limits.ts";
import { ETC } from "../shell-jail.ts";

export const SANDBOX_HOME = "/home/atrium";
export const SANDBOX_WORKSPACE = `${SANDBOX_HOME}/agent-workspace`;
const RUNTIME = "/opt/atrium";
const STAGE = "/mnt";
const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const PASSED = ["LANG", "LC_ALL", "LC_CTYPE", "TZ"];

/** The server's runtime and the runner, as [host path, name inside /opt/atrium], and the argv inside. */
function runnerCommand(): { binds: [string, string][]; command: string[] } {
  const exe = realpathSync(process.execPath);
  const root = sourceRoot();
  if (!root) return { binds: [[exe, "atrium"]], command: [`${RUNTIME}/atrium`, "sandbox-runner"] };
  const runner = join(root, "server", "sandbox", "users", "runner.ts");
  return {
    binds: [
      [exe, "bun"],
      [runner, "runner.ts"],
    ],
    command: [`${RUNTIME}/bun`, `${RUNTIME}/runner.ts`],
  };
}

/**
 * Makes the workspace ready for a jail: created when missing; a `.pi` that is not a plain folder (a
 * symlink a command planted, which bubblewrap would follow when binding it read-only) moved aside and
 * replaced; with `uid`, the tree handed to it (lchown: links themselves, never their targets). Only
 * called while none of the owner's jailed processes runs, so nothing swaps a path under the walk.
 */
export function prepareWorkspace(dir: string, uid?: number): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pi = join(dir, ".pi");
  let kind: "dir" | "other" | "none" = "none";
  try {
    kind = lstatSync(pi).isDirectory() ? "dir" : "other";
  } catch {}
  if (kind === "other") renameSync(pi, join(dir, `.pi.replaced-${Date.now()}`));
  if (kind !== "dir") mkdirSync(pi);
  if (uid !== undefined) handTo(dir, uid);
}

function handTo(path: string, uid: number): void {
  const stat = lstatSync(path);
  if (stat.uid !== uid || stat.gid !== uid) lchownSync(path, uid, uid);
  if (stat.isDirectory()) for (const name of readdirSync(path)) handTo(join(path, name), uid);
}

/** Whether the staging step can run here (root with util-linux's unshare and a /mnt to cover). */
export function stagingTools(): { unshare: string; mount: string } | undefined {
  const unshare = Bun.which("unshare");
  const mount = Bun.which("mount");
  return unshare && mount && existsSync(STAGE) ? { unshare, mount } : undefined;
}

/** The staging step: `unshare -m sh -c <bind each source onto /mnt/<name>> … -- <rest>`. */
function staged(tools: { unshare: string; mount: string }, binds: [string, string][], rest: string[]) {
  const script = `set -e
"$0" -t tmpfs -o mode=0755,size=1m atrium-stage ${STAGE}
while [ "$1" != "--" ]; do
  if [ -d "$1" ]; then mkdir "${STAGE}/$2"; else : > "${STAGE}/$2"; fi
  "$0" --bind "$1" "${STAGE}/$2"
  shift 2
done
shift
exec "$@"`;
  return [
    tools.unshare,
    "--mount",
    "--propagation",
    "private",
    "--",
    "/bin/sh",
    "-c",
    script,
    tools.mount,
    ...binds.flat(),
    "--",
    ...rest,
  ];
}

export interface JailCommandOptions {
  plan: JailPlan;
  limits: SandboxLimits;
  workspaceDir: string;
  /** bubblewrap's info and block fds (3 and 4) for attaching the network. */
  egress: boolean;
  /** The user's host uid, when the plan drops to one (a root server). */
  uid?: number;
}

export function sandboxJailCommand(options: JailCommandOptions): string[] {
  const { plan, limits } = options;
  const workspace = realpathSync(options.workspaceDir);
  const runner = runnerCommand();
  const tools = plan.dropTo ? stagingTools() : undefined;
  if (plan.dropTo && !tools)
    throw new Error("a jail as a user's own uid needs util-linux's unshare and /mnt");
  // Where bubblewrap finds each source: staged under /mnt when it runs as the user's uid, else the host path.
  const source = (host: string, name: string) => (tools ? `${STAGE}/${name}` : host);
  const env: Record<string, string> = {
    HOME: SANDBOX_HOME,
    USER: "atrium",
    PATH,
    TMPDIR: "/tmp",
    SHELL: "/bin/bash",
    TERM: "dumb",
  };
  for (const name of PASSED) if (process.env[name]) env[name] = process.env[name] as string;
  const args = jailArgs(plan, limits, {
    system: ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"],
    readOnly: runner.binds.map(([host, name]) => [source(host, name), `${RUNTIME}/${name}`]),
    readOnlyIfPresent: ETC,
    readWrite: [[source(workspace, "workspace"), SANDBOX_WORKSPACE]],
    readOnlyOver: [[source(join(workspace, ".pi"), "workspace/.pi"), `${SANDBOX_WORKSPACE}/.pi`]],
    tmpfs: ["/tmp", "/var/tmp", "/run", SANDBOX_HOME],
    chdir: SANDBOX_WORKSPACE,
    env,
    ...(options.egress ? { infoFd: 3, blockFd: 4 } : {}),
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    command: runner.command,
  });
  return tools ? staged(tools, [[workspace, "workspace"], ...runner.binds], args) : args;
}
