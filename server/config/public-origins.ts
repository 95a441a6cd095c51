/**
 * Public origins: the names besides loopback under which browsers may reach this server
 * (`--public-origin URL`, repeatable, and `APP_PUBLIC_ORIGINS`, comma-separated). Each must be a bare
 * http(s) origin; anything else stops startup with one line naming the value.
 */

export class PublicOriginError extends Error {
  override name = "PublicOriginError";
}

/**
 * The canonical origin (`https://host[:port]`, lower-case, default port dropped) of one value; `what`
 * names the list in the error (`public origin`, `outbound origin`).
 */
export function parsePublicOrigin(value: string, what = "public origin"): string {
  const text = value.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new PublicOriginError(`${what} '${value}' is not a URL (expected e.g. https://atrium.example.com)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new PublicOriginError(`${what} '${value}' must start with http:// or https://`);
  }
  const bare = (url.pathname === "/" || url.pathname === "") && !url.search && !url.hash;
  if (!bare || url.username || url.password) {
    throw new PublicOriginError(
      `${what} '${value}' must be only scheme, host and port (e.g. https://atrium.example.com:8443)`,
    );
  }
  return url.origin;
}

/** Every public origin from the flags and the variable, canonical and without duplicates. */
export function publicOriginsFrom(flags: readonly string[], variable: string | undefined): string[] {
  const values = [...flags, ...(variable ?? "").split(",").filter((v) => v.trim() !== "")];
  return [...new Set(values.map((value) => parsePublicOrigin(value)))];
}

/**
 * The origins server-side requests may reach on a user's word whatever their address
 * (`APP_OUTBOUND_ALLOW`, comma-separated; server/http/outbound/rule.ts), canonical.
 */
export function outboundAllowFrom(variable: string | undefined): string[] {
  const values = (variable ?? "")
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "");
  return [...new Set(values.map((value) => parsePublicOrigin(value, "APP_OUTBOUND_ALLOW origin")))];
}
