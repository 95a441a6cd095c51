/**
 * Configuration of the remote sandbox provider (a Daytona-compatible API) read from the environment.
 *
 *   SANDBOX_API_KEY        the server-wide API key (a user's stored provider secret overrides it for them)
 *   SANDBOX_API_URL        the API base (default Daytona's public API, https://app.daytona.io/api)
 *   SANDBOX_TARGET         the region sandboxes are created in (the provider's default when unset)
 *   APP_SANDBOX_PROVIDER   `remote` forces this provider (keys may then come only from users),
 *                          `local` / `none` switch it off whatever key is set
 *   APP_SANDBOX_TOOLBOX_HOSTS  extra hosts the key may be sent to for the in-sandbox toolbox API, comma
 *                          separated (by default only the API's host and its subdomains, which covers
 *                          Daytona's own `proxy.app.daytona.io`)
 *
 * The key is a bearer credential: it is only ever sent over HTTPS (plain HTTP is accepted for a loopback
 * API, a self-hosted provider on the same machine), so a URL that would send it in clear is refused here.
 */
import type { EnvSource } from "../../config/env.ts";
import { isLoopback } from "../../http/client.ts";

export const DAYTONA_PUBLIC_API = "https://app.daytona.io/api";

export interface RemoteSandboxConfig {
  /** The API base URL without a trailing slash. */
  apiUrl: string;
  /** The server-wide key; undefined when only users' stored keys enable sandboxes. */
  apiKey?: string;
  /** The region (`target`) sandboxes are created in. */
  target?: string;
  /** Hosts besides the API's own (and its subdomains) that may receive the key for the toolbox API. */
  toolboxHosts: string[];
  /** Bound on every single request to the provider. */
  requestTimeoutMs: number;
  /** Bound on waiting for a sandbox to reach `started` after a create or start. */
  startTimeoutMs: number;
  /** The longest pause between two polls of a running command or a starting sandbox. */
  pollIntervalMs: number;
}

export const REMOTE_DEFAULTS = {
  requestTimeoutMs: 30_000,
  startTimeoutMs: 180_000,
  pollIntervalMs: 500,
} as const;

/** The remote provider's configuration, or undefined when the environment does not select it. */
export function remoteSandboxConfig(env: EnvSource): RemoteSandboxConfig | undefined {
  const choice = env.get("APP_SANDBOX_PROVIDER");
  if (choice !== undefined && !["local", "remote", "none"].includes(choice))
    throw new Error(`APP_SANDBOX_PROVIDER must be local, remote or none (got "${choice}")`);
  const apiKey = env.get("SANDBOX_API_KEY");
  if (choice === "local" || choice === "none") return undefined;
  if (choice !== "remote" && !apiKey) return undefined;
  return {
    apiUrl: checkedApiUrl(env.get("SANDBOX_API_URL") ?? DAYTONA_PUBLIC_API),
    apiKey,
    target: env.get("SANDBOX_TARGET"),
    toolboxHosts: (env.get("APP_SANDBOX_TOOLBOX_HOSTS") ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    ...REMOTE_DEFAULTS,
  };
}

/** The API base URL, refused when it is not HTTP(S) or would carry the key in clear to another host. */
export function checkedApiUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`SANDBOX_API_URL is not a URL: "${raw}"`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new Error(`SANDBOX_API_URL must be an https:// URL (got ${url.protocol})`);
  if (url.username || url.password) throw new Error("SANDBOX_API_URL must not carry credentials");
  if (url.protocol === "http:" && !isLoopback(url.hostname))
    throw new Error(
      "SANDBOX_API_URL must use https:// (plain http:// is accepted only for a loopback host): the API key would travel in clear",
    );
  url.search = "";
  url.hash = "";
  return url.toString().replace(/\/+$/, "");
}
