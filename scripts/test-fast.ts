/**
 * `npm run test:fast`: the inner-loop suite. Every test file except the sandbox suites (pyodide and the
 * jail: tests/turns, tests/sandbox), the browser suites (Chromium: tests/e2e), the desktop suites (they
 * compile the server binary: tests/desktop) and the docs' "Try it" run (a live server running every
 * documented command, turns included), which `npm test` runs with the rest. A new folder of tests joins this run by default. Extra arguments go to `bun test`.
 */

import { join } from "node:path";
import { Glob } from "bun";

const SLOW = ["turns/", "sandbox/", "e2e/", "desktop/", "docs/try-it"];
const root = join(import.meta.dir, "..");
const files = [...new Glob("tests/**/*.test.ts").scanSync({ cwd: root })]
  .filter((path) => !SLOW.some((folder) => path.startsWith(`tests/${folder}`)))
  .sort()
  .map((path) => `./${path}`);

const test = Bun.spawn([process.execPath, "test", "--timeout", "30000", ...process.argv.slice(2), ...files], {
  cwd: root,
  stdio: ["inherit", "inherit", "inherit"],
});
process.exit(await test.exited);
