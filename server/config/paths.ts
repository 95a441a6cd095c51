/**
 * Where Atrium keeps things when nothing says otherwise: the data directory and the policy file. Shared
 * by the server's command line and its subcommands (the search indexer), so both find the same data.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import type { EnvRecord } from "./env.ts";

/** `$APP_DATA_DIR`, else `$XDG_DATA_HOME/atrium`, else `~/.local/share/atrium`. */
export function defaultDataDir(env: EnvRecord): string {
  if (env.APP_DATA_DIR) return env.APP_DATA_DIR;
  const xdg = env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share");
  return join(xdg, "atrium");
}

/** `./config/policy.toml`; when it does not exist, the built-in copy is used (builtin-policy.ts). */
export function defaultPolicyPath(cwd: string): string {
  return join(cwd, "config", "policy.toml");
}
