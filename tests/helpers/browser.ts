/**
 * Debian's Chromium driven by Playwright (never a downloaded browser). The path comes from
 * APP_CHROMIUM_PATH, else /usr/bin/chromium; .ci/run installs the package.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright";

export const CHROMIUM = process.env.APP_CHROMIUM_PATH ?? "/usr/bin/chromium";

/** `extraArgs`: further Chromium switches (the rebinding test maps a name with --host-resolver-rules). */
export async function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set APP_CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      ...extraArgs,
    ],
  });
}
