/**
 * The one command-line builder for every jailed process (turns' Python interpreters, the local-mode
 * shell). Given what to show inside (read-only and read-write binds, tmpfs, working dir, environment),
 * it returns the argv that starts the process:
 *
 *   sh -c <cgroup + seccomp step> … -- [setpriv …] prlimit <limits> -- bwrap <jail> -- [prlimit --nproc] cmd
 *
 * The shell step puts the sandbox in its own cgroups (when the host offers them) and opens the compiled
 * seccomp filter for bubblewrap; setpriv (a root server) drops to the sandbox's own host uid (uids.ts);
 * prlimit sets the per-process limits; bubblewrap unshares every namespace, maps the user to 65534 inside, drops every capability (`--cap-drop ALL`: started by root,
 * bubblewrap would otherwise keep them all inside, and a remount of a read-only bind succeeds), forbids
 * nested user namespaces, and clears the environment. Every exec keeps the same pid, so the pid the
 * server spawns is the sandbox's pid until bubblewrap exits.
 */
import { lstatSync, readlinkSync } from "node:fs";
import { CGROUP_SCRIPT, type Cgroups, cgroupSteps } from "./cgroup.ts";
import { prlimitOptions, type SandboxLimits } from "./limits.ts";

/** How processes are bounded here, decided once by isolation.ts. */
export interface JailPlan {
  bwrap: string;
  prlimit: string;
  /** Per-sandbox cgroups (root with a writable hierarchy). */
  cgroups?: Cgroups;
  /** Compiled seccomp filter file. */
  seccomp?: string;
  /**
   * Root: run bubblewrap as a real unprivileged uid (setpriv's path, and the uid the probes used; each
   * sandbox names its own in JailSpec.uid: uids.ts).
   */
  dropTo?: { setpriv: string; uid: number };
  /** RLIMIT_NPROC inside the jail, where the kernel applies it (not real root). */
  innerProcessLimit: boolean;
}

export interface JailSpec {
  /** System folders bound read-only at their own path (symlinks such as /bin -> usr/bin kept as links). */
  system: string[];
  /** Read-only binds: [host path, path inside]. */
  readOnly: [string, string][];
  /** Read-only binds at their own path, skipped when absent on this host. */
  readOnlyIfPresent?: string[];
  /** Read-write binds: [host path, path inside]. */
  readWrite?: [string, string][];
  /** Paths inside the read-write binds that stay read-only (bound over themselves; they must exist). */
  readOnlyWithin?: string[];
  /** Read-only binds laid over the read-write ones: [host path, path inside] (they must exist). */
  readOnlyOver?: [string, string][];
  /** tmpfs mounts of `limits.scratchBytes` each. */
  tmpfs: string[];
  chdir: string;
  /** The whole environment inside. */
  env?: Record<string, string>;
  /** The host uid (and gid) this sandbox runs as when the plan drops to one; default the plan's. */
  uid?: number;
  /** bubblewrap writes the sandbox's pid as JSON here and waits for a byte on blockFd (network set-up). */
  infoFd?: number;
  blockFd?: number;
  command: string[];
}

/** The fd the shell step opens the seccomp filter on, for bubblewrap's `--seccomp`. */
const SECCOMP_FD = 9;

/** System folders a program needs: /usr-merged systems have /bin, /lib... as symlinks into /usr. */
export function systemBinds(paths: string[]): string[] {
  const args: string[] = [];
  for (const path of paths) {
    let link: string | undefined;
    try {
      if (lstatSync(path).isSymbolicLink()) link = readlinkSync(path);
    } catch {
      continue;
    }
    if (link) args.push("--symlink", link, path);
    else args.push("--ro-bind", path, path);
  }
  return args;
}

export function jailArgs(plan: JailPlan, limits: SandboxLimits, spec: JailSpec): string[] {
  const steps = plan.cgroups ? cgroupSteps(plan.cgroups, limits) : [];
  // The shell's own PWD (the server's working dir) would otherwise reach bubblewrap's environment.
  const script = `${CGROUP_SCRIPT}
unset PWD OLDPWD
if [ -n "$SECCOMP" ]; then exec "$@" ${SECCOMP_FD}<"$SECCOMP"; fi
exec "$@"`;
  // The filter's path goes through the shell's own variable, set on its command line, not an environment.
  const shell = ["/bin/sh", "-c", `SECCOMP="$0"\n${script}`, plan.seccomp ?? "", ...steps, "--"];
  const uid = spec.uid ?? plan.dropTo?.uid;
  const drop = plan.dropTo
    ? [
        plan.dropTo.setpriv,
        `--reuid=${uid}`,
        `--regid=${uid}`,
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
      ]
    : [];
  const rlimits = [plan.prlimit, ...prlimitOptions(limits, false), "--"];

  const bwrap = [
    plan.bwrap,
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--uid",
    "65534",
    "--gid",
    "65534",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
    "--hostname",
    "sandbox",
  ];
  if (plan.seccomp) bwrap.push("--seccomp", String(SECCOMP_FD));
  if (spec.infoFd !== undefined) bwrap.push("--info-fd", String(spec.infoFd));
  if (spec.blockFd !== undefined) bwrap.push("--block-fd", String(spec.blockFd));
  // tmpfs first, so a bind below one of them (a workspace under /tmp) stays visible.
  bwrap.push("--proc", "/proc", "--dev", "/dev");
  for (const dir of ["/dev/shm", ...spec.tmpfs])
    bwrap.push("--size", String(limits.scratchBytes), "--tmpfs", dir);
  bwrap.push(...systemBinds(spec.system));
  if (plan.innerProcessLimit) bwrap.push("--ro-bind", plan.prlimit, plan.prlimit);
  for (const [host, inside] of spec.readOnly) bwrap.push("--ro-bind", host, inside);
  for (const path of spec.readOnlyIfPresent ?? []) bwrap.push("--ro-bind-try", path, path);
  for (const [host, inside] of spec.readWrite ?? []) bwrap.push("--bind", host, inside);
  for (const path of spec.readOnlyWithin ?? []) bwrap.push("--ro-bind", path, path);
  for (const [host, inside] of spec.readOnlyOver ?? []) bwrap.push("--ro-bind", host, inside);
  // Read-only last (mount points are made first): the jail's root and /dev are tmpfs without a size,
  // and /proc/sys must not be writable. bubblewrap leaves /proc/sys writable under --unshare-user,
  // which is harmless to a real unprivileged uid but not to host root, even without capabilities
  // (sysctl permissions are checked against uid 0, not a capability: kernel.core_pattern among them).
  bwrap.push("--remount-ro", "/dev", "--remount-ro", "/proc", "--remount-ro", "/");
  bwrap.push("--chdir", spec.chdir);
  for (const [name, value] of Object.entries(spec.env ?? {})) bwrap.push("--setenv", name, value);
  bwrap.push("--");
  // Inside the user namespace the count is this sandbox's own processes (its own user namespace).
  const inner = plan.innerProcessLimit ? [plan.prlimit, `--nproc=${limits.processes}`, "--"] : [];
  return [...shell, ...drop, ...rlimits, ...bwrap, ...inner, ...spec.command];
}
