/**
 * Test users in protected mode: the one credential resolver every multi-owner test uses. A request names
 * its user with `x-test-user: <name>`, or `Authorization: Bearer token-<name>` (the form a WebSocket's
 * `auth_token` takes); anything else carries no identity (401).
 */
import type { CredentialResolver, Identity } from "../../server/auth/identity.ts";
import type { TestAppOptions } from "./app.ts";

export const USER_HEADER = "x-test-user";

export const testUsers: CredentialResolver = (request): Identity | undefined => {
  const named = request.headers.get(USER_HEADER);
  if (named) return { id: named, kind: "bearer" };
  const token = request.headers.get("authorization")?.match(/^Bearer token-(\w+)$/)?.[1];
  return token ? { id: token, kind: "bearer" } : undefined;
};

/**
 * Options for an app with two (or more) users: protected mode and the test users' resolver, on top of
 * `options` (`createTestApp(twoUsers())`, `turnsApp(twoUsers({ env: ... }))`).
 */
export function twoUsers(options: TestAppOptions = {}): TestAppOptions {
  return {
    ...options,
    env: { APP_CHAT_RUNTIME_REQUIRE_AUTH: "1", ...options.env },
    resolvers: [testUsers, ...(options.resolvers ?? [])],
  };
}

/** Headers that make a request `user`'s (on top of `headers`). */
export function asUser(user: string, headers: Record<string, string> = {}): Record<string, string> {
  return { ...headers, [USER_HEADER]: user };
}
