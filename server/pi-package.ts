/**
 * Lets the pi SDK load inside the compiled binary. pi reads its own package.json when its modules load
 * (name, version, config dir name), and inside a `bun build --compile` executable it looks for that
 * file next to the executable, where a single-file server has none. So before pi is imported, the
 * binary writes those fields to a private folder and points PI_PACKAGE_DIR at it (pi's documented
 * override). From source nothing happens: pi finds its package.json in node_modules.
 *
 * main.ts imports this module before the server's modules, so it runs before any module that imports pi.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import piPackage from "../node_modules/@mariozechner/pi-coding-agent/package.json" with { type: "json" };

const compiled = import.meta.url.includes("$bunfs") || import.meta.url.includes("~BUN");

if (compiled && !process.env.PI_PACKAGE_DIR) {
  const dir = join(tmpdir(), `atrium-pi-${piPackage.version}-${process.getuid?.() ?? "user"}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { name, version, piConfig } = piPackage;
  // Written to a unique name, then renamed: two servers starting at once never read a half-written file.
  const temp = join(dir, `package.json.${process.pid}`);
  writeFileSync(temp, JSON.stringify({ name, version, piConfig }));
  renameSync(temp, join(dir, "package.json"));
  process.env.PI_PACKAGE_DIR = dir;
}
