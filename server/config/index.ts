/**
 * The resolved configuration of one server process: command line, policy, mode and the few variables
 * the server itself reads. Built once at startup; failures throw ConfigError with one clear line.
 */

import { ProxyTrust, ProxyTrustError } from "../auth/proxies.ts";
import { SIGNUP_MODES, type SignupMode } from "../auth/session-auth.ts";
import { isLoopback } from "../http/client.ts";
import { policyFileToLoad } from "./builtin-policy.ts";
import type { CliOptions } from "./cli.ts";
import type { EnvSource } from "./env.ts";
import { loadPolicy, PolicyError, type ResolvedPolicy } from "./policy.ts";
import { outboundAllowFrom, PublicOriginError, publicOriginsFrom } from "./public-origins.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * Local mode: everything belongs to the single local user. Protected mode: every non-public route needs
 * an identity; `reasons` names the variables that switched it on.
 */
export type Mode = { kind: "local" } | { kind: "protected"; reasons: string[] };

export interface AppConfig {
  host: string;
  port: number;
  dataDir: string;
  policy: ResolvedPolicy;
  mode: Mode;
  /**
   * Origins besides loopback that browsers may use (`--public-origin`, `APP_PUBLIC_ORIGINS`), canonical
   * (`https://host[:port]`). Their hosts join the Host allow-list and they pass the Origin check.
   */
  publicOrigins: string[];
  /**
   * Origins a server-side request may reach on a user's word at any address (`APP_OUTBOUND_ALLOW`),
   * canonical; server/http/outbound/rule.ts adds OLLAMA_BASE_URL's.
   */
  outboundAllow: string[];
  auth: {
    secret?: string;
    managedAuthUrl?: string;
    desktopToken?: string;
    /** Managed auth's JWKS, issuer and audience (`APP_MANAGED_AUTH_JWKS_URL`, `_ISSUER`, `_AUDIENCE`). */
    managedJwksUrl?: string;
    managedIssuer?: string;
    managedAudience?: string;
    /** Who may create an account with session auth (`APP_AUTH_SIGNUP`, default `invite`). */
    signup: SignupMode;
    /** Proxies whose forwarded headers are believed (`--trust-proxy`). */
    trustProxy: string[];
  };
  /** Largest request body accepted; bigger ones get 413 before they are read. */
  bodyLimitBytes: number;
  logLevel: "debug" | "info" | "warn" | "error";
}

const MIB = 1024 * 1024;
const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

export function loadConfig(cli: CliOptions, env: EnvSource): AppConfig {
  if (!isLoopback(cli.host) && !cli.allowNonLoopbackBind) {
    throw new ConfigError(
      `refusing to listen on ${cli.host}: it is not a loopback address. Pass --allow-non-loopback-bind to serve other machines (and set APP_CHAT_RUNTIME_REQUIRE_AUTH=1 so they must sign in).`,
    );
  }
  let policy: ResolvedPolicy;
  try {
    policy = loadPolicy(policyFileToLoad(cli.policyPath, cli.dataDir), env);
  } catch (error) {
    if (error instanceof PolicyError) throw new ConfigError(error.message);
    throw error;
  }
  let publicOrigins: string[];
  let outboundAllow: string[];
  try {
    publicOrigins = publicOriginsFrom(cli.publicOrigins ?? [], env.get("APP_PUBLIC_ORIGINS"));
    outboundAllow = outboundAllowFrom(env.get("APP_OUTBOUND_ALLOW"));
  } catch (error) {
    if (error instanceof PublicOriginError) throw new ConfigError(error.message);
    throw error;
  }
  const signup = env.get("APP_AUTH_SIGNUP") ?? "invite";
  if (!(SIGNUP_MODES as readonly string[]).includes(signup)) {
    throw new ConfigError(`APP_AUTH_SIGNUP must be one of ${SIGNUP_MODES.join(", ")}, got '${signup}'`);
  }
  const trustProxy = cli.trustProxy ?? [];
  try {
    new ProxyTrust(trustProxy);
  } catch (error) {
    if (error instanceof ProxyTrustError) throw new ConfigError(error.message);
    throw error;
  }
  if (env.get("APP_MANAGED_AUTH_URL") && !env.get("APP_MANAGED_AUTH_AUDIENCE")) {
    throw new ConfigError(
      "APP_MANAGED_AUTH_AUDIENCE must be set when APP_MANAGED_AUTH_URL is: the audience (aud) this server's tokens carry, so a token the auth service issued for another application is refused",
    );
  }
  const logLevel = env.get("APP_LOG_LEVEL") ?? "info";
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`APP_LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got '${logLevel}'`);
  }
  return {
    host: cli.host,
    port: cli.port,
    dataDir: cli.dataDir,
    policy,
    mode: detectMode(env),
    publicOrigins,
    outboundAllow,
    auth: {
      secret: env.get("APP_AUTH_SECRET"),
      managedAuthUrl: env.get("APP_MANAGED_AUTH_URL"),
      desktopToken: env.get("APP_DESKTOP_TOKEN"),
      managedJwksUrl: env.get("APP_MANAGED_AUTH_JWKS_URL"),
      managedIssuer: env.get("APP_MANAGED_AUTH_ISSUER"),
      managedAudience: env.get("APP_MANAGED_AUTH_AUDIENCE"),
      signup: signup as SignupMode,
      trustProxy,
    },
    // Uploads are bounded by the policy; the transport limit leaves room for multipart framing.
    bodyLimitBytes: Math.max(10 * MIB, policy.settings.storage.max_upload_bytes + MIB),
    logLevel: logLevel as AppConfig["logLevel"],
  };
}

export function detectMode(env: EnvSource): Mode {
  const reasons: string[] = [];
  if (env.get("APP_CHAT_RUNTIME_REQUIRE_AUTH") === "1") reasons.push("APP_CHAT_RUNTIME_REQUIRE_AUTH=1");
  if (env.has("APP_MANAGED_AUTH_URL")) reasons.push("APP_MANAGED_AUTH_URL");
  if (env.get("APP_HOSTED") === "1") reasons.push("APP_HOSTED=1");
  return reasons.length > 0 ? { kind: "protected", reasons } : { kind: "local" };
}

/** Every secret value this process knows, for the logger to scrub. */
export function secretValues(config: AppConfig, env: EnvSource, names: readonly string[]): string[] {
  const values = [
    ...Object.values(config.policy.secrets),
    config.auth.secret,
    config.auth.desktopToken,
    ...names.map((name) => env.get(name)),
  ];
  return values.filter((v): v is string => typeof v === "string" && v.length > 0);
}
