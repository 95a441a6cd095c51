/**
 * Loads `config/policy.toml` strictly, once, at startup (turn spec, "Runtime policy file").
 *
 * `[config] default_profile` picks the profile; `[defaults]` is deep-merged into `[profiles.<name>]`;
 * every profile is validated, so a bad value in any of them fails startup, not only in the selected one.
 * Failures throw PolicyError with a message naming the file and the key.
 */
import { existsSync, readFileSync } from "node:fs";
import { type TSchema, TypeGuard } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { parse } from "smol-toml";
import type { EnvSource } from "./env.ts";
import { type PolicySettings, PolicySettingsSchema, REMOVED_KEYS } from "./policy-schema.ts";

export class PolicyError extends Error {
  override name = "PolicyError";
}

type Table = Record<string, unknown>;

/** Secret values resolved from the variables the selected profile names. Never serialised to a client. */
export interface PolicySecrets {
  modelApiKey?: string;
  modelBaseUrl?: string;
  sandboxApiKey?: string;
  databaseUrl?: string;
  tracingEndpoint?: string;
  tracingToken?: string;
  analyticsToken?: string;
  embeddingsApiKey?: string;
  embeddingsBaseUrl?: string;
}

export interface ResolvedPolicy {
  path: string;
  profile: string;
  profiles: string[];
  settings: PolicySettings;
  secrets: PolicySecrets;
}

export function loadPolicy(path: string, env: EnvSource): ResolvedPolicy {
  if (!existsSync(path)) throw new PolicyError(`policy file not found: ${path}`);
  let doc: Table;
  try {
    doc = parse(readFileSync(path, "utf8")) as Table;
  } catch (error) {
    throw new PolicyError(`${path}: not valid TOML: ${(error as Error).message.split("\n")[0]}`);
  }
  return resolvePolicy(doc, path, env);
}

/** Validates a parsed policy document and resolves its selected profile. Exported for settings edits. */
export function resolvePolicy(doc: Table, path: string, env: EnvSource): ResolvedPolicy {
  const fail = (message: string): never => {
    throw new PolicyError(`${path}: ${message}`);
  };
  for (const key of Object.keys(doc)) {
    if (!["config", "defaults", "profiles"].includes(key)) fail(`unknown key '${key}'`);
  }
  const config = asTable(doc.config, "config", fail);
  for (const key of Object.keys(config)) if (key !== "default_profile") fail(`unknown key 'config.${key}'`);
  const selected = config.default_profile;
  if (typeof selected !== "string" || selected === "") fail("'config.default_profile' must name a profile");

  const defaults = asTable(doc.defaults ?? {}, "defaults", fail);
  checkKeys(defaults, PolicySettingsSchema, "", "defaults", fail);
  const profiles = asTable(doc.profiles ?? {}, "profiles", fail);
  const resolved: Record<string, PolicySettings> = {};
  for (const [name, value] of Object.entries(profiles)) {
    const profile = asTable(value, `profiles.${name}`, fail);
    checkKeys(profile, PolicySettingsSchema, "", `profiles.${name}`, fail);
    const merged = deepMerge(defaults, profile);
    // Check first: Errors walks the schema again, and only a bad profile needs it (a few ms at start).
    const firstError = Value.Check(PolicySettingsSchema, merged)
      ? undefined
      : Value.Errors(PolicySettingsSchema, merged).First();
    if (firstError) {
      const key = firstError.path.slice(1).replaceAll("/", ".");
      const origin = lookup(profile, key).found ? `profiles.${name}` : "defaults";
      const what = key.endsWith("_env") ? "invalid variable reference" : firstError.message.toLowerCase();
      fail(`${what} at '${origin}.${key}' (profile '${name}')${valueHint(merged, key)}`);
    }
    resolved[name] = normalise(merged as PolicySettings);
  }
  const settings = resolved[selected as string];
  if (!settings) {
    fail(
      `profile '${selected}' (config.default_profile) is absent; known: ${Object.keys(resolved).join(", ")}`,
    );
  }
  return {
    path,
    profile: selected as string,
    profiles: Object.keys(resolved),
    settings,
    secrets: resolveSecrets(settings, selected as string, env, fail),
  };
}

function resolveSecrets(
  s: PolicySettings,
  profile: string,
  env: EnvSource,
  fail: (message: string) => never,
): PolicySecrets {
  const required: [string, string][] = [];
  if (s.model.provider === "gateway")
    required.push(["model.api_key_env", s.model.api_key_env], ["model.base_url_env", s.model.base_url_env]);
  if (s.database.required) required.push(["database.url_env", s.database.url_env]);
  if (s.tracing.exporter === "managed")
    required.push(
      ["tracing.endpoint_env", s.tracing.endpoint_env],
      ["tracing.token_env", s.tracing.token_env],
    );
  for (const [key, name] of required) {
    if (!env.has(name))
      fail(`profile '${profile}' requires the environment variable ${name} (${key}), which is not set`);
  }
  return {
    modelApiKey: env.get(s.model.api_key_env),
    modelBaseUrl: env.get(s.model.base_url_env),
    sandboxApiKey: env.get(s.sandbox.api_key_env),
    databaseUrl: env.get(s.database.url_env),
    tracingEndpoint: env.get(s.tracing.endpoint_env),
    tracingToken: env.get(s.tracing.token_env),
    analyticsToken: env.get(s.analytics.project_token_env),
    embeddingsApiKey: s.search ? env.get(s.search.embeddings_api_key_env) : undefined,
    embeddingsBaseUrl: s.search ? env.get(s.search.embeddings_base_url_env) : undefined,
  };
}

function normalise(s: PolicySettings): PolicySettings {
  return { ...s, analytics: { ...s.analytics, host: s.analytics.host.replace(/\/+$/, "") } };
}

/** Walks a (partial) table against the closed schema and fails on the first key the schema lacks. */
function checkKeys(value: Table, schema: TSchema, prefix: string, where: string, fail: (m: string) => never) {
  if (!TypeGuard.IsObject(schema)) return;
  for (const [key, child] of Object.entries(value)) {
    const dotted = prefix ? `${prefix}.${key}` : key;
    const childSchema = schema.properties[key];
    if (!childSchema) {
      const removed = REMOVED_KEYS[dotted];
      fail(`unknown key '${where}.${dotted}'${removed ? ` (removed: ${removed})` : ""}`);
    }
    if (TypeGuard.IsObject(childSchema)) {
      checkKeys(asTable(child, `${where}.${dotted}`, fail), childSchema, dotted, where, fail);
    }
  }
}

function asTable(value: unknown, where: string, fail: (m: string) => never): Table {
  if (value === undefined) fail(`missing table [${where}]`);
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(`'${where}' must be a table`);
  return value as Table;
}

/** Tables merge key by key; any other value (arrays included) from `over` replaces the one in `base`. */
export function deepMerge(base: Table, over: Table): Table {
  const out: Table = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    out[key] = isTable(prev) && isTable(value) ? deepMerge(prev, value) : value;
  }
  return out;
}

function isTable(v: unknown): v is Table {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The value at a dotted path, or `found: false`. */
function lookup(table: Table, dotted: string): { found: boolean; value?: unknown } {
  let node: unknown = table;
  for (const part of dotted.split(".")) {
    if (!isTable(node) || !(part in node)) return { found: false };
    node = node[part];
  }
  return { found: true, value: node };
}

function valueHint(table: Table, dotted: string): string {
  const { found, value } = lookup(table, dotted);
  return found ? `: got ${JSON.stringify(value)}` : ": missing";
}
