/**
 * The key every HMAC of the server is made with (session CSRF tokens, the write guard's CSRF tokens,
 * preview URLs): `APP_AUTH_SECRET`, so that every instance behind a load balancer issues and accepts the
 * same tokens. Without the secret a random key of this process stands in, which only one instance can
 * use: start-up refuses protected mode on PostgreSQL without the secret (notes.ts, `authStartError`),
 * the one deployment where several instances share the data. Callers keep their own purpose prefix in
 * what they sign, so one key never signs two kinds of token alike.
 */
import { randomBytes } from "node:crypto";

const PROCESS_KEY = randomBytes(32);

/** The HMAC key for `purpose` (`preview`, `csrf`): derived from the secret, else this process's key. */
export function serverKey(secret: string | undefined, purpose: string): Buffer {
  return secret
    ? Buffer.from(`${purpose}:${secret}`)
    : Buffer.concat([Buffer.from(`${purpose}:`), PROCESS_KEY]);
}
