/**
 * What the operator is told at start about sign-in: a secret without protected mode does nothing for
 * anyone (every request is the local user), and protected mode without any credential source answers
 * 401 to every non-public route. And the one refusal: protected mode on PostgreSQL without
 * `APP_AUTH_SECRET`, where several instances may share the data but not their per-process HMAC keys.
 */
import type { AppConfig } from "../config/index.ts";

export function authNotes(config: Pick<AppConfig, "mode" | "auth">): string[] {
  const notes: string[] = [];
  const { secret, managedAuthUrl } = config.auth;
  if (secret && config.mode.kind === "local") {
    notes.push(
      "APP_AUTH_SECRET is set but the server is in local mode: /api/auth/* works, yet every request is the local user. Set APP_CHAT_RUNTIME_REQUIRE_AUTH=1 to require sign-in.",
    );
  }
  if (config.mode.kind === "protected" && !secret && !managedAuthUrl) {
    notes.push(
      "protected mode without APP_AUTH_SECRET or APP_MANAGED_AUTH_URL: nobody can sign in, every non-public route answers 401.",
    );
  }
  return notes;
}

/**
 * Why the server must not start, or undefined. On PostgreSQL a team may run several instances behind a
 * load balancer; a CSRF token or preview URL one issues must pass on the others, so their HMAC keys must
 * come from the shared secret (server-keys.ts). Whether other instances exist cannot be told reliably
 * at start, so PostgreSQL with protected mode requires the secret, always.
 */
export function authStartError(config: Pick<AppConfig, "mode" | "auth" | "policy">): string | undefined {
  if (config.mode.kind !== "protected" || config.auth.secret || !config.policy.secrets.databaseUrl) return;
  return "protected mode on PostgreSQL needs APP_AUTH_SECRET: every instance on the database must sign CSRF tokens and preview URLs with the same key (set the same long random value on each).";
}
