/**
 * The session cookie: HttpOnly (page scripts cannot read it), SameSite=Strict (other sites' pages do
 * not send it), Path=/, and Secure when the client came over HTTPS (directly or through a trusted proxy).
 *
 * Over HTTPS it is named `__Host-atrium_session`: browsers accept a cookie of that name only from a
 * secure origin, with Path=/ and no Domain, so a sibling subdomain or a plain-HTTP answer (a network
 * attacker's) cannot plant or overwrite one and sign the user into the attacker's session. Over HTTPS
 * only that name is read. Plain HTTP (loopback, a development server) cannot use the prefix and keeps
 * the plain name.
 */
export const SESSION_COOKIE = "atrium_session";
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

/** The session cookie's name for a client on HTTPS or plain HTTP. */
export function sessionCookieName(https: boolean): string {
  return https ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

/** The first value of cookie `name` in a Cookie header. */
export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const pair of header.split(";")) {
    const eq = pair.indexOf("=");
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

export function cookieHeader(
  name: string,
  value: string,
  options: { maxAgeSeconds: number; secure: boolean },
) {
  const parts = [
    `${name}=${value}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Strict",
    `Max-Age=${options.maxAgeSeconds}`,
  ];
  if (options.secure) parts.push("Secure");
  return parts.join("; ");
}

export function bearerOf(request: Request): string | undefined {
  return request.headers.get("authorization")?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
}
