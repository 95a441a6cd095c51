/**
 * The policy's `[sandbox]` table mapped into the jail's own limit type: the jail (sandbox/limits.ts)
 * knows nothing of the policy file, configuration knows the jail's terms.
 */
import type { SandboxLimits } from "../sandbox/limits.ts";
import type { PolicySettings } from "./policy-schema.ts";

const MIB = 1024 * 1024;

export function limitsFromPolicy(sandbox: PolicySettings["sandbox"]): SandboxLimits {
  return {
    memoryBytes: sandbox.memory_mb * MIB,
    addressSpaceBytes: sandbox.address_space_mb * MIB,
    processes: sandbox.processes,
    cpuSeconds: sandbox.cpu_seconds,
    fileSizeBytes: sandbox.file_size_mb * MIB,
    openFiles: sandbox.open_files,
    scratchBytes: sandbox.scratch_mb * MIB,
    cpuWeight: sandbox.cpu_weight,
    cpuCores: sandbox.cpu_cores,
  };
}
