/**
 * Resource limits of one sandbox, in the jail's own terms (configuration maps the policy's `[sandbox]`
 * into them: config/sandbox-limits.ts): the same numbers bound turns' Python interpreters
 * and the local-mode shell. Per-process limits are kernel rlimits set by util-linux `prlimit` right before
 * bubblewrap starts (inherited by everything inside, and a process without capabilities cannot raise a
 * hard limit again); the per-sandbox totals (memory, process count, CPU share and ceiling) come from
 * cgroups where the host offers them (cgroup.ts), else from the fallbacks isolation.ts reports (none for
 * the CPU).
 */
const MIB = 1024 * 1024;

export interface SandboxLimits {
  /** Real memory of the whole sandbox (bytes). */
  memoryBytes: number;
  /** Virtual memory per process (bytes); pyodide needs at least 4 GiB. */
  addressSpaceBytes: number;
  /** Processes and threads of the whole sandbox. */
  processes: number;
  /** CPU time per process (seconds). */
  cpuSeconds: number;
  /** Largest file a process may write (bytes). */
  fileSizeBytes: number;
  /** Open file descriptors per process. */
  openFiles: number;
  /** Size of each tmpfs inside the jail: /scratch, /tmp, /dev/shm (bytes). */
  scratchBytes: number;
  /** The sandbox's share of contended CPU (cgroup cpu.weight, 1–10000; 100 is the kernel's default). */
  cpuWeight: number;
  /** Most CPU the whole sandbox uses at once, in cores (cgroup cpu.max); 0: no ceiling. */
  cpuCores: number;
}

/** The committed policy's values, for callers without a policy (benchmarks, tools). */
export const DEFAULT_LIMITS: SandboxLimits = {
  memoryBytes: 2048 * MIB,
  addressSpaceBytes: 8192 * MIB,
  processes: 256,
  cpuSeconds: 900,
  fileSizeBytes: 256 * MIB,
  openFiles: 1024,
  scratchBytes: 256 * MIB,
  cpuWeight: 100,
  cpuCores: 2,
};

/**
 * `prlimit` options setting soft and hard limits together. `nproc` only where the kernel applies it: never
 * to real root, whatever the uid inside a user namespace (isolation.ts decides).
 */
export function prlimitOptions(limits: SandboxLimits, nproc: boolean): string[] {
  const options = [
    `--as=${limits.addressSpaceBytes}`,
    `--cpu=${limits.cpuSeconds}`,
    `--fsize=${limits.fileSizeBytes}`,
    `--nofile=${limits.openFiles}`,
    "--core=0",
  ];
  if (nproc) options.push(`--nproc=${limits.processes}`);
  return options;
}
