/** The built-in policy: the default path falls back to it when absent; a --policy that is missing still fails. */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  BUILTIN_POLICY_PATH,
  policyFileToLoad,
  policyFileToWrite,
  savedPolicyPath,
} from "../../server/config/builtin-policy.ts";
import { parseCli } from "../../server/config/cli.ts";
import { createEnvSource } from "../../server/config/env.ts";
import { ConfigError, loadConfig } from "../../server/config/index.ts";
import { defaultPolicyPath } from "../../server/config/paths.ts";
import { REPO_ROOT } from "../helpers/app.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

test("the built-in policy is the committed config/policy.toml", () => {
  expect(readFileSync(BUILTIN_POLICY_PATH, "utf8")).toBe(
    readFileSync(join(REPO_ROOT, "config", "policy.toml"), "utf8"),
  );
});

test("the default path: the file when it exists, else the built-in copy", () => {
  const empty = join(dir.path, "empty");
  mkdirSync(empty);
  expect(policyFileToLoad(defaultPolicyPath(empty), join(empty, "data"), empty)).toBe(BUILTIN_POLICY_PATH);
  const checkout = join(dir.path, "checkout");
  mkdirSync(join(checkout, "config"), { recursive: true });
  writeFileSync(join(checkout, "config", "policy.toml"), "");
  expect(policyFileToLoad(defaultPolicyPath(checkout), join(checkout, "data"), checkout)).toBe(
    join(checkout, "config", "policy.toml"),
  );
});

test("a --policy file that does not exist is not replaced: startup fails naming it", () => {
  const missing = join(dir.path, "missing.toml");
  expect(policyFileToLoad(missing, dir.path, dir.path)).toBe(missing);
  const cli = parseCli(["--policy", missing, "--data-dir", dir.path], {}, dir.path);
  if (cli.kind !== "serve") throw new Error("unexpected CLI result");
  expect(() => loadConfig(cli.options, createEnvSource({}))).toThrow(
    new ConfigError(`policy file not found: ${missing}`),
  );
});

test("settings edits of the built-in policy are saved in the data dir and loaded from there next time", () => {
  const cwd = join(dir.path, "outside");
  const data = join(dir.path, "outside-data");
  mkdirSync(cwd);
  mkdirSync(data);
  expect(policyFileToWrite(BUILTIN_POLICY_PATH, data)).toBe(savedPolicyPath(data));
  expect(policyFileToWrite(join(cwd, "mine.toml"), data)).toBe(join(cwd, "mine.toml"));
  expect(policyFileToLoad(defaultPolicyPath(cwd), data, cwd)).toBe(BUILTIN_POLICY_PATH);
  writeFileSync(savedPolicyPath(data), readFileSync(BUILTIN_POLICY_PATH, "utf8"));
  expect(policyFileToLoad(defaultPolicyPath(cwd), data, cwd)).toBe(savedPolicyPath(data));
  // A checkout's own file still wins over a saved copy.
  mkdirSync(join(cwd, "config"));
  writeFileSync(join(cwd, "config", "policy.toml"), "");
  expect(policyFileToLoad(defaultPolicyPath(cwd), data, cwd)).toBe(join(cwd, "config", "policy.toml"));
});
