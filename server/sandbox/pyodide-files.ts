/**
 * Where the sandbox finds pyodide's files in a compiled binary. The subprocess loads pyodide from a
 * folder on disk (bubblewrap binds it read-only into the jail), and a single-file server has none, so
 * the binary carries the files (pyodide-embedded.ts) and writes them once per version to a cache folder
 * (`$XDG_CACHE_HOME/atrium` or `~/.cache/atrium`), each through a temporary name and a rename so that
 * two servers starting at once never read half a file.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export function extractPyodide(
  embedded: { version: string; files: Record<string, string> },
  env: NodeJS.ProcessEnv = process.env,
): string {
  const cache = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  const dir = join(cache, "atrium", `pyodide-${embedded.version}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const [name, source] of Object.entries(embedded.files)) {
    const target = join(dir, name);
    const bytes = readFileSync(source);
    if (existsSync(target) && statSync(target).size === bytes.byteLength) continue;
    const temp = `${target}.${process.pid}.tmp`;
    writeFileSync(temp, bytes);
    renameSync(temp, target);
  }
  return dir;
}
