/**
 * What the window may load and what goes to the system browser: the window stays on the server's
 * origin; web links open outside. Pure functions (no Electron) so they are tested under `bun test`.
 */

/** True when `url` is on the server's origin (scheme, host and port all equal). */
export function isServerUrl(url: string, origin: string): boolean {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}

const EXTERNAL_PROTOCOLS = new Set(["https:", "http:", "mailto:"]);

/** Links the system may open: web pages and mail, never `file:`, `javascript:` or app-specific schemes. */
export function isExternalLink(url: string): boolean {
  try {
    return EXTERNAL_PROTOCOLS.has(new URL(url).protocol);
  } catch {
    return false;
  }
}
