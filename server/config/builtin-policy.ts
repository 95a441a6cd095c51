/**
 * The committed `config/policy.toml`, built in. The file import embeds it in a compiled binary, so the
 * binary started outside a checkout (no `--policy`, no `./config/policy.toml`) still has the defaults.
 * Settings edits of it are saved in the data dir (savedPolicyPath) and win over it from then on.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import policyFile from "../../config/policy.toml" with { type: "file" };
import { defaultPolicyPath } from "./paths.ts";

// bun-types declare .toml imports as parsed tables; `type: "file"` makes it a path like any other file.
export const BUILTIN_POLICY_PATH = policyFile as unknown as string;

/**
 * Where settings edits are saved while the built-in policy is in use: it lives inside the binary, so
 * the edited copy goes to the data dir and is loaded from there on the next start.
 */
export function savedPolicyPath(dataDir: string): string {
  return join(dataDir, "policy.toml");
}

/**
 * The policy file to load: the one asked for, except that the default path, when it does not exist,
 * falls back to the copy saved by settings edits in the data dir, else to the built-in file. A missing
 * file named with `--policy` still stops startup.
 */
export function policyFileToLoad(requested: string, dataDir: string, cwd: string = process.cwd()): string {
  if (requested !== defaultPolicyPath(cwd) || existsSync(requested)) return requested;
  const saved = savedPolicyPath(dataDir);
  return existsSync(saved) ? saved : BUILTIN_POLICY_PATH;
}

/** The file settings edits write: the loaded one, or the data dir's copy when the built-in was loaded. */
export function policyFileToWrite(loaded: string, dataDir: string): string {
  return loaded === BUILTIN_POLICY_PATH ? savedPolicyPath(dataDir) : loaded;
}
