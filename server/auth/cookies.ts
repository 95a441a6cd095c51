/**
 * The session cookie: HttpOnly (page scripts cannot read it), SameSite=Strict (other sites' pages do
 * not send it), Path=/, and Secure when the client came over HTTPS (directly or through a trusted proxy).
 */
export const SESSION_COOKIE = "atrium_session";

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
