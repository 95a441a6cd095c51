/**
 * Where a compiled binary finds sqlite-vec's extension file. SQLite loads an extension from a path on
 * disk, and a single-file server has none, so the binary carries the file (sqlite-vec-embedded.ts) and
 * writes it to the cache folder (`$XDG_CACHE_HOME/atrium/sqlite-vec/`, else `~/.cache/atrium/...`)
 * before loading it. The name carries the file's hash, so two versions never share a name; the bytes
 * on disk are checked against that hash before every load (a truncated or altered file is rewritten,
 * never loaded); a write goes through a temporary name and a rename, so a second server starting at
 * the same moment never loads half a file. The folder is the user's alone (0700) and the file is not
 * writable by anyone else (0644): whoever can replace it runs code in the server.
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { extname, join } from "node:path";
import type { EmbeddedSqliteVec } from "./sqlite-vec-embedded.ts";

/** The cache folder the extension is written to. */
export function sqliteVecCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(cache, "atrium", "sqlite-vec");
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/**
 * Writes the embedded extension to the cache unless an intact copy is there, and returns its path.
 * Throws when the embedded bytes themselves do not match their recorded hash (a damaged binary).
 */
export function extractSqliteVec(embedded: EmbeddedSqliteVec, env: NodeJS.ProcessEnv = process.env): string {
  const dir = sqliteVecCacheDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // A folder left group- or world-writable (made by hand, another umask) would let others swap the file.
  if ((statSync(dir).mode & 0o022) !== 0) chmodSync(dir, 0o700);
  const suffix = extname(embedded.name);
  const target = join(dir, `vec0-${embedded.version}-${embedded.sha256.slice(0, 16)}${suffix}`);
  if (existsSync(target) && sha256(readFileSync(target)) === embedded.sha256) return target;
  const bytes = readFileSync(embedded.path);
  if (sha256(bytes) !== embedded.sha256)
    throw new Error("the embedded sqlite-vec file does not match its hash");
  const temp = join(dir, `.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`);
  try {
    writeFileSync(temp, bytes, { mode: 0o644 });
    chmodSync(temp, 0o644);
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  return target;
}
