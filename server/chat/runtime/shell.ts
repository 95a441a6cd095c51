/**
 * The agent's `bash` tool in local mode (protected mode's runs in the user's long-lived sandbox:
 * sandbox-tools.ts): pi's own shell tool, each command in a fresh jail
 * (server/sandbox/shell-jail.ts: the owner's workspace read-write, the system read-only, nothing else of
 * the data dir or the checkout, no network unless the policy allows egress, the policy's limits).
 * Where bubblewrap is missing (/health/ready says isolation "none"), commands run on the host as the
 * user's own shell would, in the workspace, with an allow-listed environment: the server's environment
 * holds provider keys and secrets (docs/design.md §13: secrets never reach code a model writes), so the shell
 * sees only what a command needs to run, and HOME is the owner's workspace.
 */
import type { PolicySettings } from "../../config/policy-schema.ts";
import { limitsFromPolicy } from "../../config/sandbox-limits.ts";
import { loadPi } from "../../models/pi-sdk.ts";
import { confinementFor } from "../../sandbox/confinement.ts";
import { detectSandbox, type Isolation } from "../../sandbox/isolation.ts";
import { DEFAULT_LIMITS, type SandboxLimits } from "../../sandbox/limits.ts";
import type { QuotaWatch } from "../../sandbox/quota-watch.ts";
import { jailedExec, type ShellJail } from "../../sandbox/shell-jail.ts";

/** Variables a shell needs to behave normally; none of them carries a credential. */
const PASSED = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "SHELL", "TMPDIR"];

export function shellEnvironment(env: NodeJS.ProcessEnv, workspaceDir: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { HOME: workspaceDir, PWD: workspaceDir };
  for (const name of PASSED) if (env[name] !== undefined) out[name] = env[name];
  out.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  return out;
}

export interface ShellOptions {
  /** Forces an isolation (tests of the "none" path); default: detected. */
  isolation?: Isolation;
  limits?: SandboxLimits;
  network?: "none" | "egress";
  /** The workspace quota's watchdog (a command past the quota is stopped). */
  quota?: QuotaWatch;
}

/** The shell's options from the policy's `[sandbox]` table. */
export function shellOptions(sandbox: PolicySettings["sandbox"], quota?: QuotaWatch): ShellOptions {
  return { limits: limitsFromPolicy(sandbox), network: sandbox.network, ...(quota ? { quota } : {}) };
}

function shellJail(options: ShellOptions): ShellJail | undefined {
  if (options.isolation === "none") return undefined;
  const plan = detectSandbox().shellPlan;
  if (!plan) return undefined;
  const limits = options.limits ?? DEFAULT_LIMITS;
  return {
    plan,
    limits,
    network: options.network ?? "none",
    confinement: confinementFor("bubblewrap", limits),
    ...(options.quota ? { quota: options.quota } : {}),
  };
}

/** Registered under pi's name `bash`, so it replaces the built-in tool of the same name. */
export async function workspaceBashTool(workspaceDir: string, options: ShellOptions = {}) {
  // pi loads lazily (see pi-sdk.ts); the session start that needs this tool awaits it anyway.
  const { createBashToolDefinition, defineTool } = await loadPi();
  const jail = shellJail(options);
  if (jail) {
    return defineTool(
      createBashToolDefinition(workspaceDir, { operations: { exec: jailedExec(jail, workspaceDir) } }),
    );
  }
  return defineTool(
    createBashToolDefinition(workspaceDir, {
      spawnHook: ({ command, cwd, env }) => ({ command, cwd, env: shellEnvironment(env, workspaceDir) }),
    }),
  );
}
