/** Apps with session auth on (protected mode, APP_AUTH_SECRET), and the sign-up/sign-in calls tests repeat. */
import { createTestApp, postJson, type TestApp, type TestAppOptions } from "../helpers/app.ts";

export const SECRET = "test-secret-0123456789abcdef0123456789";
export const PASSWORD = "correct horse battery";
/** The Origin a page of the in-process server (`http://localhost`) sends. */
export const OWN_ORIGIN = { origin: "http://localhost" };

/**
 * The app's database URL as an environment (empty on SQLite): what a command or a second app on the same
 * data dir needs to see the same database when the suite runs on PostgreSQL.
 */
export function databaseEnvOf(t: TestApp): Record<string, string> {
  const url = t.ctx.env.get("APP_DATABASE_URL");
  return url ? { APP_DATABASE_URL: url } : {};
}

export function authApp(options: TestAppOptions = {}): Promise<TestApp> {
  return createTestApp({
    ...options,
    env: {
      APP_CHAT_RUNTIME_REQUIRE_AUTH: "1",
      APP_AUTH_SECRET: SECRET,
      APP_AUTH_SIGNUP: "open",
      ...options.env,
    },
  });
}

export interface SignedUser {
  id: string;
  token: string;
  bearer: Record<string, string>;
  cookie: Record<string, string>;
}

export async function signUp(
  t: TestApp,
  email: string,
  extra: Record<string, unknown> = {},
): Promise<SignedUser> {
  const { status, body } = await t.json<{ token: string; user: { id: string }; message?: string }>(
    "/api/auth/sign-up/email",
    postJson({ email, password: PASSWORD, ...extra }),
  );
  if (status !== 200) throw new Error(`sign-up of ${email} failed: ${status} ${JSON.stringify(body)}`);
  return credentialsOf(body.user.id, body.token);
}

export function credentialsOf(id: string, token: string): SignedUser {
  return {
    id,
    token,
    bearer: { authorization: `Bearer ${token}` },
    cookie: { cookie: `atrium_session=${token}` },
  };
}
