/**
 * How a sandbox subprocess is started (DESIGN.md, "Sandbox isolation"): the server spawns itself with the
 * `sandbox` subcommand, with an empty environment, and on Linux under bubblewrap with no namespaces
 * shared, only the runtime bound read-only (the executable and its libraries, the checkout's sources and
 * packages without dotfiles such as .env, never the data dir, and pyodide's files), and a tmpfs scratch as
 * working dir.
 * Where bubblewrap is missing the isolation is "none": the same subprocess, empty environment, no jail.
 */
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { EMBEDDED_PYODIDE } from "./pyodide-embedded.ts";
import { extractPyodide } from "./pyodide-files.ts";

export type Isolation = "bubblewrap" | "none";

let extracted: string | undefined;

const require = createRequire(import.meta.url);

/** The server's source root when running from source; undefined inside a compiled binary. */
function sourceRoot(): string | undefined {
  if (Bun.main.startsWith("/$bunfs/") || Bun.main.startsWith("B:\\~BUN")) return undefined;
  return join(import.meta.dir, "..", "..");
}

/** The directory holding pyodide's runtime files (pyodide.asm.wasm, python_stdlib.zip, ...). */
export function pyodideDir(): string {
  // A compiled binary uses a `pyodide/` folder beside it when one is shipped, else its embedded copy.
  const beside = join(dirname(process.execPath), "pyodide");
  if (!sourceRoot() && existsSync(join(beside, "pyodide.asm.wasm"))) return beside;
  if (!sourceRoot() && EMBEDDED_PYODIDE) {
    extracted ??= extractPyodide(EMBEDDED_PYODIDE);
    return extracted;
  }
  try {
    return realpathSync(dirname(require.resolve("pyodide/package.json")));
  } catch {
    throw new Error(`pyodide's files were not found (looked for the pyodide package and for ${beside})`);
  }
}

let bwrapPath: string | null | undefined;

/** bubblewrap's path when it is installed and works here (some containers forbid user namespaces). */
export function findBubblewrap(): string | undefined {
  if (bwrapPath !== undefined) return bwrapPath ?? undefined;
  bwrapPath = null;
  if (process.platform !== "linux") return undefined;
  const found = Bun.which("bwrap");
  if (!found) return undefined;
  const probe = Bun.spawnSync([found, "--unshare-all", "--ro-bind", "/", "/", "true"], {
    env: {},
    stdout: "ignore",
    stderr: "ignore",
  });
  if (probe.exitCode === 0) bwrapPath = found;
  return bwrapPath ?? undefined;
}

export function detectIsolation(): Isolation {
  return findBubblewrap() ? "bubblewrap" : "none";
}

/** The command line of one sandbox subprocess; `keepOut` paths are never visible inside the jail. */
export function sandboxCommand(isolation: Isolation, keepOut: string[] = []): string[] {
  const exe = realpathSync(process.execPath);
  const root = sourceRoot();
  const pyodide = pyodideDir();
  const inner = root ? [exe, join(root, "server", "main.ts")] : [exe];
  inner.push("sandbox", "--pyodide", pyodide);
  if (isolation === "none") return inner;

  const bwrap = findBubblewrap();
  if (!bwrap) throw new Error("bubblewrap is not available");
  const args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv"];
  for (const lib of ["/lib", "/lib64", "/usr/lib", "/usr/lib64"]) args.push("--ro-bind-try", lib, lib);
  args.push("--ro-bind", exe, exe);
  if (root) {
    // The server's own sources and installed packages: every top-level entry of the checkout except
    // dotfiles (.env, .git) and any folder holding a path to keep out (the data dir).
    for (const name of readdirSync(root)) {
      const path = join(root, name);
      if (name.startsWith(".") || keepOut.some((k) => k === path || k.startsWith(`${path}/`))) continue;
      args.push("--ro-bind", realpathSync(path), path);
    }
  }
  args.push("--ro-bind", pyodide, pyodide);
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/scratch", "--chdir", "/scratch");
  args.push("--", ...inner);
  return args;
}
