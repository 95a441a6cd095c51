/**
 * What the operator is told at start about sign-in: a secret without protected mode does nothing for
 * anyone (every request is the local user), and protected mode without any credential source answers
 * 401 to every non-public route.
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
