/**
 * The agent's `bash` tool in local mode: pi's own shell tool, spawned with an allow-listed environment.
 * The server's environment holds provider keys and secrets (DESIGN.md: secrets never reach code a model
 * writes), so the shell sees only what a command needs to run, and HOME is the owner's workspace.
 */
import { loadPi } from "../../models/pi-sdk.ts";

/** Variables a shell needs to behave normally; none of them carries a credential. */
const PASSED = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "SHELL", "TMPDIR"];

export function shellEnvironment(env: NodeJS.ProcessEnv, workspaceDir: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { HOME: workspaceDir, PWD: workspaceDir };
  for (const name of PASSED) if (env[name] !== undefined) out[name] = env[name];
  out.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  return out;
}

/** Registered under pi's name `bash`, so it replaces the built-in tool of the same name. */
export async function workspaceBashTool(workspaceDir: string) {
  // pi loads lazily (see pi-sdk.ts); the session start that needs this tool awaits it anyway.
  const { createBashToolDefinition, defineTool } = await loadPi();
  return defineTool(
    createBashToolDefinition(workspaceDir, {
      spawnHook: ({ command, cwd, env }) => ({ command, cwd, env: shellEnvironment(env, workspaceDir) }),
    }),
  );
}
