/**
 * `npm install`'s last step (package.json `postinstall`): loads the modules a server start loads before
 * `/health/ready`, the ones server/main.ts imports, without starting anything. Bun keeps what it
 * transpiles in a cache in the user's HOME; writing that cache is most of what makes a checkout's first
 * start slower than the next ones (docs/benchmarks.md, "Cold start"), so the install pays it instead of
 * the first `npm start`. It never fails the install: a problem is one line, and the first start is
 * merely slower.
 */
export {};

try {
  await import("../server/sandbox/isolation.ts");
  await import("../server/pi-package.ts");
  await import("../server/run.ts");
} catch (error) {
  process.stderr.write(`atrium: could not load the server's modules ahead of its first start: ${error}\n`);
}
// Loaded, not started: nothing here should keep the process, but the install must never wait on it.
process.exit(0);
