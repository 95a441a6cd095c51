/**
 * Per-sandbox cgroups: a process-count (pids) and a real-memory bound on the whole sandbox, whatever uid
 * it runs as. rlimits alone cannot do this when the server runs as root: the kernel never applies
 * RLIMIT_NPROC to host root, and a uid inside a user namespace is host root again.
 *
 * Under the server's own cgroup (cgroup v1: in each of the pids and memory hierarchies; v2: one
 * directory) this makes `atrium-<server pid>/`, and each sandbox gets a child named by the pid of the
 * process that starts it. That process is a small shell step in front of bubblewrap (wrapperPrefix): it
 * makes its directory, writes the limits, moves itself in and only then execs, so nothing of the sandbox
 * ever runs outside its cgroup. The server reads the OOM count and removes the directory when the
 * sandbox exits (reap), and sweeps leftovers.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Cgroups {
  version: 1 | 2;
  /** Parent directories (this server's) per controller; v2 has one directory for both. */
  pids?: string;
  memory?: string;
}

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
    const limitFile = controller === "pids" ? "pids.max" : "memory.limit_in_bytes";
    // Proves the limit can be set before anything relies on it.
    const probe = join(parent, "probe");
    const ok =
      tryMkdir(probe) && tryWrite(join(probe, limitFile), controller === "pids" ? "64" : "1073741824");
    removeDir(probe);
    return ok ? parent : undefined;
  };
  const pids = v1("pids");
  const memory = v1("memory");
  if (pids || memory) return { version: 1, pids, memory };

  const line = own.find((l) => l.startsWith("0::"));
  const mount = all.find((m) => m.type === "cgroup2");
  if (!line || !mount) return undefined;
  const base = ownDir(mount, line.slice(3));
  removeStale(base);
  const available = readText(join(base, "cgroup.controllers")).split(/\s+/);
  const wanted = ["pids", "memory"].filter((c) => available.includes(c));
  if (wanted.length === 0) return undefined;
  const enable = wanted.map((c) => `+${c}`).join(" ");
  // v2 lets a cgroup hand controllers to children only while it holds no process itself (the root
  // excepted), so this works where the server runs in a namespace root (containers) or was delegated one.
  const parent = join(base, name);
  if (!tryWrite(join(base, "cgroup.subtree_control"), enable)) return undefined;
  if (!tryMkdir(parent) || !tryWrite(join(parent, "cgroup.subtree_control"), enable)) return undefined;
  return {
    version: 2,
    pids: wanted.includes("pids") ? parent : undefined,
    memory: wanted.includes("memory") ? parent : undefined,
  };
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
export function cgroupSteps(cgroups: Cgroups, limits: { memoryBytes: number; processes: number }): string[] {
  const steps: string[] = [];
  const { pids, memory } = cgroups;
  if (cgroups.version === 1) {
    if (pids) steps.push(pids, "pids.max", String(limits.processes), pids, "cgroup.procs", "self");
    if (memory) {
      steps.push(memory, "memory.limit_in_bytes", String(limits.memoryBytes));
      // With swap accounting, memory+swap gets the same bound: a sandbox never swaps its way past it.
      if (existsSync(join(memory, "memory.memsw.limit_in_bytes")))
        steps.push(memory, "memory.memsw.limit_in_bytes", String(limits.memoryBytes));
      steps.push(memory, "cgroup.procs", "self");
    }
    return steps;
  }
  const dir = pids ?? memory;
  if (!dir) return steps;
  if (pids) steps.push(dir, "pids.max", String(limits.processes));
  if (memory) steps.push(dir, "memory.max", String(limits.memoryBytes), dir, "memory.swap.max", "0");
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
  return [...new Set([cgroups.pids, cgroups.memory].filter((d): d is string => !!d))].map((d) =>
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
  for (const parent of new Set([cgroups.pids, cgroups.memory])) {
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
