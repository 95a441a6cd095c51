/**
 * The built web UI for tests: `ensureWebBuild()` builds build/web/ once per test process when it is
 * missing (npm test builds it first; a single test file run by hand may not have), and
 * `assetPaths(html)` lists the hashed script and stylesheet an index.html names.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { buildWeb, WEB_BUILD_DIR } from "../../scripts/build-web.ts";

let pending: Promise<unknown> | undefined;

export function ensureWebBuild(): Promise<unknown> {
  if (existsSync(join(WEB_BUILD_DIR, "index.html"))) return Promise.resolve();
  pending ??= buildWeb();
  return pending;
}

export function assetPaths(html: string): { script: string; style: string } {
  const script = html.match(/<script type="module" src="(\/app\/assets\/[^"]+\.js)"/)?.[1];
  const style = html.match(/<link rel="stylesheet" href="(\/app\/assets\/[^"]+\.css)"/)?.[1];
  if (!script || !style) throw new Error(`index.html names no hashed script/stylesheet: ${html}`);
  return { script, style };
}
