/**
 * The desktop launch token (docs/design.md §4). The desktop shell starts the server with a random
 * per-launch `APP_DESKTOP_TOKEN` and puts it in a cookie for the server's origin; the server then answers
 * non-public routes only to requests carrying it (that cookie, or `Authorization: Bearer <token>`), so no
 * other local process or web page can drive the user's server. identity.ts applies it in every mode.
 */
import { createHash, timingSafeEqual } from "node:crypto";

/** The cookie the desktop shell sets for the server's origin. */
export const DESKTOP_TOKEN_COOKIE = "atrium_desktop_token";

/** True when the request carries the expected token as the cookie or as a bearer token. */
export function carriesDesktopToken(request: Request, expected: string): boolean {
  const presented = [
    bearerOf(request.headers.get("authorization")),
    ...cookieValues(request.headers.get("cookie")),
  ];
  // Every candidate is compared, so the time taken does not tell which one (or whether any) matched.
  let match = false;
  for (const value of presented) if (value !== undefined && sameSecret(value, expected)) match = true;
  return match;
}

/** Constant-time equality; hashing first makes the comparison independent of the lengths too. */
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

function bearerOf(header: string | null): string | undefined {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

/** Every value of the token cookie in a Cookie header (a header may repeat a name). */
function cookieValues(header: string | null): string[] {
  if (!header) return [];
  const values: string[] = [];
  for (const pair of header.split(";")) {
    const eq = pair.indexOf("=");
    if (eq < 0 || pair.slice(0, eq).trim() !== DESKTOP_TOKEN_COOKIE) continue;
    values.push(pair.slice(eq + 1).trim());
  }
  return values;
}
