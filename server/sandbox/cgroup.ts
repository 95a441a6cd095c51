/**
 * Per-sandbox cgroups: a process-count (pids) and a real-memory bound on the whole sandbox, whatever uid
 * it runs as, and its CPU: a weight (its share when the CPU is contended, the same for every sandbox by
 * default, so one sandbox's hundred busy processes count as one against another's one) and a ceiling in
 * cores. rlimits alone cannot do this when the server runs as root: the kernel never applies
 * RLIMIT_NPROC to host root, and a uid inside a user namespace is host root again.
 *
 * Under the server's own cgroup (cgroup v1: in each of the pids, memory and cpu hierarchies; v2: one
 * directory) this makes `atrium-<server pid>/`, and each sandbox gets a child named by the pid of the
 * process that starts it. That process is a small shell step in front of bubblewrap (wrapperPrefix): it
 * makes its directory, writes the limits, moves itself in and only then execs, so nothing of the sandbox
 * ever runs outside its cgroup. The server reads the OOM count and removes the directory when the
 * sandbox exits (reap), and sweeps leftovers.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";

export interface Cgroups {
  version: 1 | 2;
  /** Parent directories (this server's) per controller; v2 has one directory for both. */
  pids?: string;
  memory?: string;
  cpu?: string;
}

/** What cgroupSteps writes: the per-sandbox totals of limits.ts. */
export interface CgroupLimits {
  memoryBytes: number;
  processes: number;
  /** cpu.weight (v2, 1–10000, 100 the kernel's default); v1 gets cpu.shares = weight × 1024 / 100. */
  cpuWeight: number;
  /** At most this many CPUs' worth of time per period (cpu.max / cfs_quota_us); 0: no ceiling. */
  cpuCores: number;
}

/** The CFS period the CPU ceiling is expressed in (µs): the kernel's default. */
export const CPU_PERIOD_US = 100_000;

interface Mount {
  point: string;
  root: string;
  type: string;
  options: string[];
}

function mounts(): Mount[] {
  const out: Mount[] = [];
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const fields = left.split(" ");
    const [type, , superOptions] = right.split(" ");
    out.push({
      point: fields[4] ?? "",
      root: fields[3] ?? "/",
      type: type ?? "",
      options: (superOptions ?? "").split(","),
    });
  }
  return out;
}

/** This process's cgroup directory in the hierarchy mounted at `mount`. */
function ownDir(mount: Mount, path: string): string {
  const relative = mount.root !== "/" && path.startsWith(mount.root) ? path.slice(mount.root.length) : path;
  return join(mount.point, relative);
}

function tryMkdir(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true });
    return true;
  } catch {
    return false;
  }
}

function tryWrite(file: string, value: string): boolean {
  try {
    writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

/** The cgroups this server may create sandboxes in, or undefined when it may not (not root, read-only). */
export function detectCgroups(): Cgroups | undefined {
  if (process.platform !== "linux") return undefined;
  let own: string[];
  let all: Mount[];
  try {
    own = readFileSync("/proc/self/cgroup", "utf8").split("\n").filter(Boolean);
    all = mounts();
  } catch {
    return undefined;
  }
  const name = `atrium-${process.pid}`;
  const v1 = (controller: string): string | undefined => {
    const line = own.find((l) => l.split(":")[1]?.split(",").includes(controller));
    const mount = all.find((m) => m.type === "cgroup" && m.options.includes(controller));
    if (!line || !mount) return undefined;
    const base = ownDir(mount, line.split(":").slice(2).join(":"));
    removeStale(base);
    const parent = join(base, name);
    // Proves the limits can be set before anything relies on them.
    const probe = join(parent, "probe");
    const ok =
      tryMkdir(probe) && V1_PROBES[controller].every(([file, value]) => tryWrite(join(probe, file), value));
    removeDir(probe);
    return ok ? parent : undefined;
  };
  const legacy = { pids: v1("pids"), memory: v1("memory"), cpu: v1("cpu") };
  if (legacy.cpu) tryWrite(join(legacy.cpu, "cpu.shares"), String(cpuShares(groupWeight())));
  if (legacy.pids || legacy.memory || legacy.cpu) return { version: 1, ...legacy };

  const line = own.find((l) => l.startsWith("0::"));
  const mount = all.find((m) => m.type === "cgroup2");
  if (!line || !mount) return undefined;
  const base = ownDir(mount, line.slice(3));
  removeStale(base);
  const available = readText(join(base, "cgroup.controllers")).split(/\s+/);
  // v2 lets a cgroup hand controllers to children only while it holds no process itself (the root
  // excepted), so this works where the server runs in a namespace root (containers) or was delegated one.
  // Each controller on its own: one the host will not hand down (cpu, with realtime tasks) costs only itself.
  const parent = join(base, name);
  const enabled = (c: string) =>
    available.includes(c) &&
    tryWrite(join(base, "cgroup.subtree_control"), `+${c}`) &&
    tryMkdir(parent) &&
    tryWrite(join(parent, "cgroup.subtree_control"), `+${c}`);
  const [pids, memory, cpu] = ["pids", "memory", "cpu"].map((c) => (enabled(c) ? parent : undefined));
  if (cpu) tryWrite(join(cpu, "cpu.weight"), String(groupWeight()));
  if (!pids && !memory && !cpu) return undefined;
  return { version: 2, pids, memory, cpu };
}

/**
 * The weight of this server's group of sandboxes against the host's other processes and groups: as
 * much as one busy process per core. With the default (100, one process), every sandbox together would
 * get one process's share on a busy host, where each of their processes used to count on its own.
 */
function groupWeight(): number {
  return Math.min(10_000, 100 * availableParallelism());
}

/** v1: the files each controller's probe writes (cpu needs CFS bandwidth control for its ceiling). */
const V1_PROBES: Record<string, [string, string][]> = {
  pids: [["pids.max", "64"]],
  memory: [["memory.limit_in_bytes", "1073741824"]],
  cpu: [
    ["cpu.shares", "1024"],
    ["cpu.cfs_period_us", String(CPU_PERIOD_US)],
    ["cpu.cfs_quota_us", String(CPU_PERIOD_US)],
  ],
};

/** cpu.weight (v2) as v1's cpu.shares: 100 is 1024, the default of each. */
export function cpuShares(weight: number): number {
  return Math.max(2, Math.round((weight * 1024) / 100));
}

/** The CPU ceiling as CFS quota per period (µs), or undefined for none. */
export function cpuQuota(cores: number): number | undefined {
  return cores > 0 ? Math.max(1000, Math.round(cores * CPU_PERIOD_US)) : undefined;
}

/** Directories left by servers that are gone (a crash, a kill -9): their sandboxes died with them. */
function removeStale(base: string): void {
  let names: string[] = [];
  try {
    names = readdirSync(base).filter((n) => /^atrium-\d+$/.test(n));
  } catch {}
  for (const name of names) {
    const pid = Number(name.slice(7));
    if (pid === process.pid || existsSync(`/proc/${pid}`)) continue;
    sweepCgroups({ version: 1, pids: join(base, name) }, true);
  }
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

function removeDir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch {
    return !existsSync(dir);
  }
}

/**
 * `sh -c SCRIPT` arguments that put the shell in fresh per-sandbox cgroups with the limits, then exec the
 * rest of the command line (`--` and what follows). Triples of (parent dir, file, value); the value
 * `self` is the shell's own pid, which stays the sandbox's pid through every exec.
 */
export function cgroupSteps(cgroups: Cgroups, limits: CgroupLimits): string[] {
  const steps: string[] = [];
  const { pids, memory, cpu } = cgroups;
  const quota = cpuQuota(limits.cpuCores);
  if (cgroups.version === 1) {
    if (pids) steps.push(pids, "pids.max", String(limits.processes), pids, "cgroup.procs", "self");
    if (memory) {
      steps.push(memory, "memory.limit_in_bytes", String(limits.memoryBytes));
      // With swap accounting, memory+swap gets the same bound: a sandbox never swaps its way past it.
      if (existsSync(join(memory, "memory.memsw.limit_in_bytes")))
        steps.push(memory, "memory.memsw.limit_in_bytes", String(limits.memoryBytes));
      steps.push(memory, "cgroup.procs", "self");
    }
    if (cpu) {
      steps.push(cpu, "cpu.shares", String(cpuShares(limits.cpuWeight)));
      steps.push(
        cpu,
        "cpu.cfs_period_us",
        String(CPU_PERIOD_US),
        cpu,
        "cpu.cfs_quota_us",
        String(quota ?? -1),
      );
      steps.push(cpu, "cgroup.procs", "self");
    }
    return steps;
  }
  const dir = pids ?? memory ?? cpu;
  if (!dir) return steps;
  if (pids) steps.push(dir, "pids.max", String(limits.processes));
  if (memory) steps.push(dir, "memory.max", String(limits.memoryBytes), dir, "memory.swap.max", "0");
  if (cpu) {
    steps.push(dir, "cpu.weight", String(limits.cpuWeight));
    steps.push(dir, "cpu.max", `${quota ?? "max"} ${CPU_PERIOD_US}`);
  }
  steps.push(dir, "cgroup.procs", "self");
  return steps;
}

/** The shell program consuming cgroupSteps; memory.swap.max may be absent (no swap support): ignored. */
export const CGROUP_SCRIPT = `set -e
while [ "$1" != -- ]; do
  mkdir -p "$1/$$"
  v="$3"; [ "$v" = self ] && v=$$
  if [ "$2" = memory.swap.max ]; then echo "$v" > "$1/$$/$2" 2>/dev/null || true; else echo "$v" > "$1/$$/$2"; fi
  shift 3
done
shift`;

/** The per-sandbox directories of the sandbox started as `pid`. */
function sandboxDirs(cgroups: Cgroups, pid: number): string[] {
  return [...new Set([cgroups.pids, cgroups.memory, cgroups.cpu].filter((d): d is string => !!d))].map((d) =>
    join(d, String(pid)),
  );
}

/** True when the kernel's OOM killer killed a process of this sandbox. */
export function wasOomKilled(cgroups: Cgroups, pid: number): boolean {
  return oomKills(cgroups, pid) > 0;
}

/** How many processes of this sandbox the kernel's OOM killer killed so far (a long-lived one outlives them). */
export function oomKills(cgroups: Cgroups, pid: number): number {
  if (!cgroups.memory) return 0;
  const dir = join(cgroups.memory, String(pid));
  const text = readText(join(dir, cgroups.version === 1 ? "memory.oom_control" : "memory.events"));
  const count = /oom_kill (\d+)/.exec(text);
  return count ? Number(count[1]) : 0;
}

/** Removes a finished sandbox's directories (what is still busy is left for sweep). */
export function removeSandboxCgroups(cgroups: Cgroups, pid: number): void {
  for (const dir of sandboxDirs(cgroups, pid)) removeDir(dir);
}

/** Removes the directories of sandboxes that are gone; with `all`, this server's parent directories too. */
export function sweepCgroups(cgroups: Cgroups, all = false): void {
  for (const parent of new Set([cgroups.pids, cgroups.memory, cgroups.cpu])) {
    if (!parent) continue;
    let names: string[] = [];
    try {
      names = readdirSync(parent, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {}
    // A live sandbox's directory can be empty for a moment (made, not yet entered): never touch those.
    for (const name of names) if (!existsSync(`/proc/${name}`)) removeDir(join(parent, name));
    if (all) removeDir(parent);
  }
}
