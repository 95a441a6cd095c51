/**
 * Environment variables, read by name only.
 *
 * Atrium reads the variables its policy file and provider catalog name, nothing else. A value comes from
 * the process environment first, then from the repository `.env` file (Bun's own automatic `.env` loading
 * is switched off in bunfig.toml so this is the one place that decides).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "dotenv";

export interface EnvSource {
  /** The value of a variable, or undefined when unset or empty. */
  get(name: string): string | undefined;
  has(name: string): boolean;
}

export type EnvRecord = Record<string, string | undefined>;

export function createEnvSource(processEnv: EnvRecord, dotenv: EnvRecord = {}): EnvSource {
  const get = (name: string) => {
    const value = processEnv[name] ?? dotenv[name];
    return value === undefined || value === "" ? undefined : value;
  };
  return { get, has: (name) => get(name) !== undefined };
}

/** Reads `<dir>/.env` when it exists; a missing file is an empty set. */
export function readDotenv(dir: string): EnvRecord {
  const file = join(dir, ".env");
  if (!existsSync(file)) return {};
  return parse(readFileSync(file, "utf8"));
}

/** Environment variable names: what a policy entry ending in `_env` must look like. */
export const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
