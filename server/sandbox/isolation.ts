/**
 * How a sandbox subprocess is started (docs/design.md §11): the server spawns itself with the
 * `sandbox` subcommand, with an empty environment, and on Linux in the jail of jail.ts: no namespace
 * shared, every capability dropped, only the runtime bound read-only (the executable and its libraries,
 * the checkout's sources and packages without dotfiles such as .env, never the data dir, and pyodide's
 * files), tmpfs scratch space of a bounded size as working dir, and the limits of limits.ts.
 * Where bubblewrap is missing the isolation is "none": the same subprocess, empty environment, no jail.
 *
 * What is in force is decided once per process (detectSandbox) and reported by /health/ready and the
 * settings view.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { SandboxReport } from "../../schemas/common.ts";
import { detectCgroups, sweepCgroups } from "./cgroup.ts";
import { type JailPlan, jailArgs } from "./jail.ts";
import { DEFAULT_LIMITS, type SandboxLimits } from "./limits.ts";
import { EMBEDDED_PYODIDE } from "./pyodide-embedded.ts";
import { extractPyodide } from "./pyodide-files.ts";
import { seccompFilterFile } from "./seccomp.ts";

export type Isolation = "bubblewrap" | "none";
export type { SandboxReport };

let extracted: string | undefined;

const require = createRequire(import.meta.url);

/** The uid the probe of the unprivileged jail runs as: it only checks that any other uid reads the runtime. */
const NOBODY = 65534;

/** The server's source root when running from source; undefined inside a compiled binary. */
export function sourceRoot(): string | undefined {
  if (Bun.main.startsWith("/$bunfs/") || Bun.main.startsWith("B:\\~BUN")) return undefined;
  return join(import.meta.dir, "..", "..");
}

/** The directory holding pyodide's runtime files (pyodide.asm.wasm, python_stdlib.zip, ...). */
export function pyodideDir(): string {
  // A compiled binary uses a `pyodide/` folder beside it when one is shipped, else its embedded copy.
  const beside = join(dirname(process.execPath), "pyodide");
  if (!sourceRoot() && existsSync(join(beside, "pyodide.asm.wasm"))) return beside;
  if (!sourceRoot() && EMBEDDED_PYODIDE) {
    extracted ??= extractPyodide(EMBEDDED_PYODIDE);
    return extracted;
  }
  try {
    return realpathSync(dirname(require.resolve("pyodide/package.json")));
  } catch {
    throw new Error(`pyodide's files were not found (looked for the pyodide package and for ${beside})`);
  }
}

/** The pyodide release whose files pyodideDir() holds (a snapshot's key names it: snapshot.ts). */
export function pyodideVersion(): string {
  if (!sourceRoot() && EMBEDDED_PYODIDE) return EMBEDDED_PYODIDE.version;
  try {
    const manifest = JSON.parse(readFileSync(join(pyodideDir(), "package.json"), "utf8")) as {
      version?: unknown;
    };
    if (typeof manifest.version === "string") return manifest.version;
  } catch {}
  // A folder shipped without its package.json: its runtime's size stands for the version.
  return `unknown-${statSync(join(pyodideDir(), "pyodide.asm.wasm")).size}`;
}

let bwrapPath: string | null | undefined;

/** bubblewrap's path when it is installed and works here (some containers forbid user namespaces). */
export function findBubblewrap(): string | undefined {
  if (bwrapPath !== undefined) return bwrapPath ?? undefined;
  bwrapPath = null;
  if (process.platform !== "linux") return undefined;
  const found = Bun.which("bwrap");
  if (!found) return undefined;
  const probe = Bun.spawnSync([found, "--unshare-all", "--ro-bind", "/", "/", "true"], {
    env: {},
    stdout: "ignore",
    stderr: "ignore",
  });
  if (probe.exitCode === 0) bwrapPath = found;
  return bwrapPath ?? undefined;
}

/** "bubblewrap" when the whole jail of jail.ts works here, else "none". */
export function detectIsolation(): Isolation {
  return detectSandbox().plan ? "bubblewrap" : "none";
}

interface Detected {
  /** The jail of turns' interpreters. */
  plan?: JailPlan;
  /** The jail of the local-mode shell: it writes the owner's workspace, so it keeps the server's uid. */
  shellPlan?: JailPlan;
  report: SandboxReport;
}

let detected: Detected | undefined;

const UNJAILED: SandboxReport = {
  isolation: "none",
  capabilities: "unchanged",
  user: "server",
  processLimit: "none",
  memoryLimit: process.platform === "linux" ? "watchdog" : "none",
  cpuLimit: "none",
  seccomp: "none",
};

/** A probe: `command` in a jail of `plan`, which works on this host when the command exits 0. */
interface Probe {
  plan: JailPlan;
  args: string[];
}

function probeOf(plan: JailPlan, command: string[], readOnly: [string, string][] = []): Probe {
  const system = ["/usr", "/bin", "/lib", "/lib64"];
  return { plan, args: jailArgs(plan, DEFAULT_LIMITS, { system, readOnly, tmpfs: [], chdir: "/", command }) };
}

function probe({ plan, args }: Probe): boolean {
  const ok = Bun.spawnSync(args, { env: {}, stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  if (plan.cgroups) sweepCgroups(plan.cgroups);
  return ok;
}

async function probeInBackground({ plan, args }: Probe): Promise<boolean> {
  const ok = (await Bun.spawn(args, { env: {}, stdout: "ignore", stderr: "ignore" }).exited) === 0;
  if (plan.cgroups) sweepCgroups(plan.cgroups);
  return ok;
}

/**
 * Started by root, the interpreters' jail runs as a real unprivileged uid where the host allows it
 * (unprivileged user namespaces, and that uid can read the runtime): inside a user namespace made by
 * root, "uid 65534" is host root again, and the kernel still treats host root specially without any
 * capability (file owner checks, sysctl writes, RLIMIT_NPROC never applied).
 */
function unprivileged(plan: JailPlan): Probe | undefined {
  const setpriv = Bun.which("setpriv");
  if (!setpriv) return undefined;
  const candidate: JailPlan = { ...plan, dropTo: { setpriv, uid: NOBODY }, innerProcessLimit: true };
  const checkout = sourceRoot();
  const main = checkout ? join(checkout, "server", "main.ts") : realpathSync(process.execPath);
  const pyodide = pyodideDir();
  const binds: [string, string][] = [
    [dirname(main), dirname(main)],
    [pyodide, pyodide],
  ];
  const readable = ["/usr/bin/test", "-r", main, "-a", "-r", join(pyodide, "pyodide.asm.wasm")];
  return probeOf(candidate, readable, binds);
}

/** The jails to try here, before trying them: undefined when bubblewrap or prlimit is missing. */
function candidates(bwrap: string | undefined) {
  const prlimit = bwrap ? Bun.which("prlimit") : null;
  if (!bwrap || !prlimit) return undefined;
  const root = process.getuid?.() === 0;
  const cgroups = detectCgroups();
  // What is still busy at exit (sandboxes dying with the server) the next start removes (cgroup.ts).
  if (cgroups) process.once("exit", () => sweepCgroups(cgroups, true));
  const shellPlan: JailPlan = {
    bwrap,
    prlimit,
    cgroups,
    seccomp: seccompFilterFile(),
    innerProcessLimit: !root,
  };
  return {
    root,
    shellPlan,
    shell: probeOf(shellPlan, ["/bin/true"]),
    dropped: root ? unprivileged(shellPlan) : undefined,
  };
}

/** What the probes found: the interpreters' jail is the unprivileged one where it works. */
function conclude(found: NonNullable<ReturnType<typeof candidates>>, droppedWorks: boolean): Detected {
  const { root, shellPlan } = found;
  const plan = (droppedWorks && found.dropped?.plan) || shellPlan;
  const processLimit = shellPlan.cgroups?.pids
    ? "cgroup"
    : plan.innerProcessLimit
      ? plan.dropTo
        ? "uid"
        : "rlimit"
      : "none";
  return {
    plan,
    shellPlan,
    report: {
      isolation: "bubblewrap",
      capabilities: "dropped",
      user: root && !plan.dropTo ? "root_without_capabilities" : "unprivileged",
      processLimit,
      memoryLimit: shellPlan.cgroups?.memory ? "cgroup" : "watchdog",
      cpuLimit: shellPlan.cgroups?.cpu ? "cgroup" : "none",
      seccomp: shellPlan.seccomp ? "filter" : "none",
    },
  };
}

/** What bounds a sandbox here; decided once per process. */
export function detectSandbox(): Detected {
  if (detected) return detected;
  const found = candidates(findBubblewrap());
  // bubblewrap missing, or working but not with these options (an old version without
  // --disable-userns or --size): no jail.
  if (!found || !probe(found.shell)) detected = { report: UNJAILED };
  else detected = conclude(found, found.dropped !== undefined && probe(found.dropped));
  return detected;
}

let detecting: Promise<Detected> | undefined;

/**
 * The same decision with the probes run at once as child processes, so they overlap the server's module
 * loading instead of blocking the start for their sum (about 100 ms here). detectSandbox() then finds it
 * made; a call before it finishes decides synchronously, as without it.
 */
export function detectSandboxInBackground(): Promise<Detected> {
  detecting ??= (async () => {
    if (detected) return detected;
    const found = process.platform === "linux" ? candidates(Bun.which("bwrap") ?? undefined) : undefined;
    // One probe of the full jail replaces findBubblewrap's simpler one: it fails wherever that would.
    const [shell, dropped] = found
      ? await Promise.all([probeInBackground(found.shell), found.dropped && probeInBackground(found.dropped)])
      : [false, false];
    detected ??= found && shell ? conclude(found, dropped === true) : { report: UNJAILED };
    return detected;
  })();
  return detecting;
}

/** The report for a pool forced to an isolation (tests of the "none" path), else what is in force. */
export function sandboxReport(isolation?: Isolation): SandboxReport {
  if (isolation === "none") return UNJAILED;
  return detectSandbox().report;
}

/** The runtime's shared libraries and nothing else of the system. */
export const RUNTIME_LIBRARIES = ["/lib", "/lib64", "/usr/lib", "/usr/lib64"];

/**
 * Read-only binds of the server's own runtime for a jail that runs this executable: the executable, and
 * from a checkout the sources and installed packages (every top-level entry except dotfiles such as
 * .env and .git, and any folder holding a path to keep out: the data dir).
 */
export function runtimeBinds(keepOut: string[] = []): [string, string][] {
  const exe = realpathSync(process.execPath);
  const root = sourceRoot();
  const readOnly: [string, string][] = [[exe, exe]];
  if (!root) return readOnly;
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (name.startsWith(".") || keepOut.some((k) => k === path || k.startsWith(`${path}/`))) continue;
    readOnly.push([realpathSync(path), path]);
  }
  return readOnly;
}

/**
 * The file descriptor an interpreter reads the snapshot from: the server's own read-only descriptor of
 * the file it checked, inherited (no path of the data dir is shown in the jail). The worker reads it and
 * closes it before any code runs.
 */
export const SNAPSHOT_FD = 3;

export interface SandboxCommandOptions {
  /** The host uid when the jail drops to one (a root server): the interpreter's slot's (uids.ts). */
  uid?: number;
  /** Start from the interpreters' snapshot (snapshot.ts), read from SNAPSHOT_FD. */
  snapshot?: boolean;
  /** The command that makes the snapshot and writes it to stdout instead of serving steps. */
  makeSnapshot?: boolean;
}

/** The command line of one sandbox subprocess; `keepOut` paths are never visible inside the jail. */
export function sandboxCommand(
  isolation: Isolation,
  keepOut: string[] = [],
  limits: SandboxLimits = DEFAULT_LIMITS,
  options: SandboxCommandOptions = {},
): string[] {
  const exe = realpathSync(process.execPath);
  const root = sourceRoot();
  const pyodide = pyodideDir();
  const inner = root ? [exe, join(root, "server", "main.ts")] : [exe];
  inner.push("sandbox", "--pyodide", pyodide);
  if (options.makeSnapshot) inner.push("--make-snapshot");
  if (options.snapshot) inner.push("--snapshot-fd", String(SNAPSHOT_FD));
  if (isolation === "none") return inner;

  const { plan } = detectSandbox();
  if (!plan) throw new Error("bubblewrap is not available");
  const readOnly = runtimeBinds(keepOut);
  readOnly.push([pyodide, pyodide]);
  return jailArgs(plan, limits, {
    system: RUNTIME_LIBRARIES,
    readOnly,
    tmpfs: ["/scratch", "/tmp"],
    chdir: "/scratch",
    command: inner,
    ...(options.uid === undefined ? {} : { uid: options.uid }),
  });
}
