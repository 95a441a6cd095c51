/** config/policy.toml: strict loading, profiles, variables (turn spec, "Runtime policy file"). */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createEnvSource, readDotenv } from "../../server/config/env.ts";
import { loadPolicy, PolicyError } from "../../server/config/policy.ts";
import { REPO_ROOT } from "../helpers/app.ts";
import { tempDir } from "../helpers/tmp.ts";

const COMMITTED = join(REPO_ROOT, "config", "policy.toml");
const committedText = readFileSync(COMMITTED, "utf8");
const dir = tempDir();
afterAll(() => dir.remove());
const noEnv = createEnvSource({});

let n = 0;
function policyFile(text: string): string {
  const path = join(dir.path, `policy-${n++}.toml`);
  writeFileSync(path, text);
  return path;
}

function failure(path: string, env = noEnv): string {
  try {
    loadPolicy(path, env);
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyError);
    return (error as Error).message;
  }
  throw new Error("expected the policy to fail");
}

describe("the committed policy", () => {
  const policy = loadPolicy(COMMITTED, noEnv);

  test("selects the sandbox profile and names every spec profile", () => {
    expect(policy.profile).toBe("sandbox");
    expect(policy.profiles).toEqual(
      expect.arrayContaining([
        "sandbox",
        "sandbox-recursive",
        "sandbox-managed",
        "sandbox-bench",
        "sandbox-bench-40",
      ]),
    );
  });

  test("carries the contract's defaults", () => {
    const s = policy.settings;
    expect(s.runtime.live_enabled).toBe(true);
    expect(s.tracing.async_logging).toBe(true);
    expect(s.tracing.trace_sampling_ratio).toBe(1);
    expect(s.tracing.trace_content_max_chars).toBe(10000);
    expect(s.rlm.recursion_enabled).toBe(false);
    expect(s.rlm.recursion_max_parallel_children).toBe(2);
    expect(s.rlm.autonomous_memory_categories).toEqual([]);
    expect(s.analytics.host).toBe("https://us.i.posthog.com");
  });

  test("carries the budgets model code cannot stretch", () => {
    const { runtime, rlm, storage } = policy.settings;
    expect(runtime).toMatchObject({
      max_interpreters: 0,
      sandbox_queue_timeout_seconds: 300,
      sandbox_start_timeout_seconds: 25,
    });
    expect(storage.workspace_quota_bytes).toBe(1024 ** 3);
    expect(rlm).toMatchObject({
      step_timeout_seconds: 60,
      turn_timeout_seconds: 900,
      model_call_timeout_seconds: 180,
      max_tool_calls: 1000,
      max_events_per_step: 400,
      max_events_per_turn: 4000,
      max_event_chars: 131072,
      max_stored_bytes_per_turn: 16 * 1024 ** 2,
      max_answer_chars: 131072,
      recursion_child_timeout_seconds: 300,
    });
  });

  test("budgets that would switch a bound off fail", () => {
    for (const [key, bad] of [
      ["max_interpreters = 0", "max_interpreters = -1"],
      ["sandbox_start_timeout_seconds = 25", "sandbox_start_timeout_seconds = 0"],
      ["turn_timeout_seconds = 900", "turn_timeout_seconds = 0"],
      ["max_tool_calls = 1000", "max_tool_calls = 0"],
      ["max_events_per_step = 400", "max_events_per_step = 5"],
      ["max_stored_bytes_per_turn = 16777216", "max_stored_bytes_per_turn = 1000"],
      ["workspace_quota_bytes = 1073741824", "workspace_quota_bytes = 0"],
    ] as const) {
      const name = key.split(" ")[0] as string;
      expect(failure(policyFile(committedText.replace(key, bad)))).toContain(`.${name}'`);
    }
  });

  test("holds no secret values, only variable names", () => {
    expect(committedText).not.toMatch(/sk-|api_key\s*=|token\s*=/i);
    expect(policy.secrets).toEqual({
      modelApiKey: undefined,
      modelBaseUrl: undefined,
      sandboxApiKey: undefined,
      databaseUrl: undefined,
      tracingEndpoint: undefined,
      tracingToken: undefined,
      analyticsToken: undefined,
    });
  });
});

describe("profiles", () => {
  test("[defaults] is deep-merged into the selected profile", () => {
    const path = policyFile(
      committedText.replace('default_profile = "sandbox"', 'default_profile = "sandbox-recursive"'),
    );
    const policy = loadPolicy(path, noEnv);
    expect(policy.settings.rlm.recursion_enabled).toBe(true);
    // Inherited from [defaults.rlm], untouched by the profile's table.
    expect(policy.settings.rlm.max_iters).toBe(12);
    expect(policy.settings.rlm.recursion_max_parallel_children).toBe(2);
  });

  test("an absent profile fails and names the key and the file", () => {
    const path = policyFile(committedText.replace('default_profile = "sandbox"', 'default_profile = "nope"'));
    const message = failure(path);
    expect(message).toContain(path);
    expect(message).toContain("profile 'nope' (config.default_profile) is absent");
  });

  test("profiles do not fall back to each other: a required variable must be set", () => {
    const path = policyFile(
      committedText.replace('default_profile = "sandbox"', 'default_profile = "sandbox-managed"'),
    );
    expect(failure(path)).toContain(
      "requires the environment variable APP_GATEWAY_TOKEN (model.api_key_env)",
    );
    const vars = {
      APP_GATEWAY_TOKEN: "gw-token-123",
      APP_GATEWAY_BASE_URL: "https://gateway.example.test/v1",
      APP_DATABASE_URL: "/tmp/x.db",
      APP_TRACING_ENDPOINT: "https://trace.example.test",
    };
    expect(failure(path, createEnvSource(vars))).toContain("APP_TRACING_TOKEN (tracing.token_env)");
    const policy = loadPolicy(path, createEnvSource({ ...vars, APP_TRACING_TOKEN: "tt-123456" }));
    expect(policy.settings.model.provider).toBe("gateway");
    expect(policy.settings.tracing.exporter).toBe("managed");
    expect(policy.secrets.modelApiKey).toBe("gw-token-123");
  });
});

describe("strictness", () => {
  test("a missing file fails", () => {
    const message = failure(join(dir.path, "missing.toml"));
    expect(message).toBe(`policy file not found: ${join(dir.path, "missing.toml")}`);
  });

  test("invalid TOML fails with the file", () => {
    const path = policyFile("[config\ndefault_profile = 1");
    expect(failure(path)).toStartWith(`${path}: not valid TOML`);
  });

  test("an unknown key fails and names it", () => {
    const path = policyFile(committedText.replace("[defaults.runtime]", "[defaults.runtime]\nturbo = true"));
    expect(failure(path)).toBe(`${path}: unknown key 'defaults.runtime.turbo'`);
    const inProfile = policyFile(`${committedText}\n[profiles.sandbox.storage]\nmax_upload_mb = 3\n`);
    expect(failure(inProfile)).toBe(`${inProfile}: unknown key 'profiles.sandbox.storage.max_upload_mb'`);
    const top = policyFile(`extra = 1\n${committedText}`);
    expect(failure(top)).toBe(`${top}: unknown key 'extra'`);
  });

  test("removed keys fail as unknown keys, with the reason", () => {
    const mode = policyFile(
      committedText.replace("[defaults.tracing]", '[defaults.tracing]\ntrace_content_mode = "full"'),
    );
    expect(failure(mode)).toContain("unknown key 'defaults.tracing.trace_content_mode' (removed:");
    const depth = policyFile(`${committedText}\n[profiles.sandbox.rlm]\nrecursion_max_depth = 2\n`);
    expect(failure(depth)).toContain(
      "unknown key 'profiles.sandbox.rlm.recursion_max_depth' (removed: the child depth is fixed at 1)",
    );
  });

  test("an invalid variable reference fails", () => {
    const path = policyFile(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${...} reference is the bad input under test
      committedText.replace('api_key_env = "SANDBOX_API_KEY"', 'api_key_env = "${SANDBOX KEY}"'),
    );
    expect(failure(path)).toContain("invalid variable reference at 'defaults.sandbox.api_key_env'");
  });

  test("a wrongly typed value names the key and where it came from", () => {
    const path = policyFile(`${committedText}\n[profiles.sandbox.runtime]\nheartbeat_seconds = "often"\n`);
    const message = failure(path);
    expect(message).toContain("'profiles.sandbox.runtime.heartbeat_seconds' (profile 'sandbox')");
    expect(message).toContain('got "often"');
  });

  test("every profile is validated, not only the selected one", () => {
    const path = policyFile(`${committedText}\n[profiles.other.rlm]\nmax_iters = 0\n`);
    expect(failure(path)).toContain("'profiles.other.rlm.max_iters' (profile 'other')");
  });

  test("the analytics host must be an http(s) URL; trailing slashes are normalised", () => {
    const bad = policyFile(committedText.replace('host = "https://us.i.posthog.com"', 'host = "posthog"'));
    expect(failure(bad)).toContain("'defaults.analytics.host'");
    const slashes = policyFile(
      committedText.replace('host = "https://us.i.posthog.com"', 'host = "https://ph.example.test///"'),
    );
    expect(loadPolicy(slashes, noEnv).settings.analytics.host).toBe("https://ph.example.test");
  });
});

describe("variables", () => {
  test("only named variables are read; the process environment wins over .env", () => {
    writeFileSync(
      join(dir.path, ".env"),
      "APP_ANALYTICS_TOKEN=from-dotenv\nSANDBOX_API_KEY=sandbox-from-dotenv\nUNRELATED=x\n",
    );
    const dotenv = readDotenv(dir.path);
    const env = createEnvSource({ APP_ANALYTICS_TOKEN: "from-process" }, dotenv);
    const policy = loadPolicy(COMMITTED, env);
    expect(policy.secrets.analyticsToken).toBe("from-process");
    expect(policy.secrets.sandboxApiKey).toBe("sandbox-from-dotenv");
    expect(Object.values(policy.secrets)).not.toContain("x");
  });

  test("an empty variable in the process environment counts as unset, and .env does not fill it", () => {
    const env = createEnvSource({ SANDBOX_API_KEY: "" }, { SANDBOX_API_KEY: "from-dotenv" });
    expect(env.get("SANDBOX_API_KEY")).toBeUndefined();
    expect(env.has("SANDBOX_API_KEY")).toBe(false);
  });
});
