/**
 * The committed `config/policy.toml`, built in. The file import embeds it in a compiled binary, so the
 * binary started outside a checkout (no `--policy`, no `./config/policy.toml`) still has the defaults.
 */
import { existsSync } from "node:fs";
import policyFile from "../../config/policy.toml" with { type: "file" };
import { defaultPolicyPath } from "./cli.ts";

// bun-types declare .toml imports as parsed tables; `type: "file"` makes it a path like any other file.
export const BUILTIN_POLICY_PATH = policyFile as unknown as string;

/**
 * The policy file to load: the one asked for, except that the default path falls back to the built-in
 * file when it does not exist. A missing file named with `--policy` still stops startup.
 */
export function policyFileToLoad(requested: string, cwd: string = process.cwd()): string {
  if (requested === defaultPolicyPath(cwd) && !existsSync(requested)) return BUILTIN_POLICY_PATH;
  return requested;
}
