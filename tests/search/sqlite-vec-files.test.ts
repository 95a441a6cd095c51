/**
 * The compiled binary's copy of sqlite-vec: written to the cache folder under a name that carries its
 * hash, checked against that hash before every load (a truncated or altered file is rewritten, never
 * loaded), readable but not writable by others in a folder only the user can write, and loadable by
 * SQLite from there. The binary itself is driven in tests/desktop/binary.test.ts.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { sqliteVecFile } from "../../scripts/build.ts";
import type { EmbeddedSqliteVec } from "../../server/search/stores/sqlite-vec-embedded.ts";
import { extractSqliteVec, sqliteVecCacheDir } from "../../server/search/stores/sqlite-vec-files.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir("atrium-vec-");
afterAll(() => dir.remove());

const npmFile = getLoadablePath();
const bytes = readFileSync(npmFile);
const hash = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const embedded: EmbeddedSqliteVec = {
  version: "0.1.9",
  name: npmFile.split("/").at(-1) ?? "vec0.so",
  path: npmFile,
  sha256: hash(bytes),
};

let n = 0;
/** A fresh cache root per test, as `XDG_CACHE_HOME`. */
function cacheEnv() {
  return { XDG_CACHE_HOME: join(dir.path, `cache-${n++}`) };
}

function loads(path: string): string {
  const db = new Database(":memory:");
  try {
    db.loadExtension(path);
    return db.query<{ v: string }, []>("SELECT vec_version() AS v").get()?.v ?? "";
  } finally {
    db.close();
  }
}

describe("the cached sqlite-vec file", () => {
  test("is written once under a hash-bearing name, 0644 in a 0700 folder, and SQLite loads it", () => {
    const env = cacheEnv();
    const path = extractSqliteVec(embedded, env);
    expect(path).toBe(join(sqliteVecCacheDir(env), `vec0-0.1.9-${embedded.sha256.slice(0, 16)}.so`));
    expect(hash(readFileSync(path))).toBe(embedded.sha256);
    expect(statSync(path).mode & 0o777).toBe(0o644);
    expect(statSync(sqliteVecCacheDir(env)).mode & 0o777).toBe(0o700);
    expect(loads(path)).toStartWith("v0.");
    // Intact: the second call reuses the file (same inode), and no temporary file is left behind.
    const inode = statSync(path).ino;
    expect(extractSqliteVec(embedded, env)).toBe(path);
    expect(statSync(path).ino).toBe(inode);
    expect(readdirSync(sqliteVecCacheDir(env))).toEqual([basename(path)]);
  });

  test("a truncated or altered cached file is rewritten before it is loaded", () => {
    const env = cacheEnv();
    const path = extractSqliteVec(embedded, env);
    truncateSync(path, 4096);
    expect(extractSqliteVec(embedded, env)).toBe(path);
    expect(hash(readFileSync(path))).toBe(embedded.sha256);
    // Same size, one byte changed: a size check alone would load it.
    const altered = Buffer.from(bytes);
    altered[altered.length >> 1] ^= 0xff;
    writeFileSync(path, altered);
    expect(extractSqliteVec(embedded, env)).toBe(path);
    expect(hash(readFileSync(path))).toBe(embedded.sha256);
    expect(loads(path)).toStartWith("v0.");
  });

  test("another build's file gets its own name, so versions never mix", () => {
    const env = cacheEnv();
    const first = extractSqliteVec(embedded, env);
    const copy = join(dir.path, "other-vec0.so");
    const other = Buffer.concat([bytes, Buffer.from([0])]);
    writeFileSync(copy, other);
    const second = extractSqliteVec({ ...embedded, version: "0.2.0", path: copy, sha256: hash(other) }, env);
    expect(second).not.toBe(first);
    expect(hash(readFileSync(first))).toBe(embedded.sha256);
    expect(hash(readFileSync(second))).toBe(hash(other));
  });

  test("a folder others can write is closed to them before the file is trusted", () => {
    const env = cacheEnv();
    mkdirSync(sqliteVecCacheDir(env), { recursive: true });
    chmodSync(sqliteVecCacheDir(env), 0o777);
    extractSqliteVec(embedded, env);
    expect(statSync(sqliteVecCacheDir(env)).mode & 0o777).toBe(0o700);
  });

  test("embedded bytes that do not match their hash (a damaged binary) are refused, never written", () => {
    const env = cacheEnv();
    expect(() => extractSqliteVec({ ...embedded, sha256: "0".repeat(64) }, env)).toThrow(
      "does not match its hash",
    );
    expect(readdirSync(sqliteVecCacheDir(env))).toEqual([]);
  });
});

describe("the build's choice of sqlite-vec file", () => {
  test("this machine's platform package, and none for a target npm did not install", () => {
    expect(sqliteVecFile()?.path).toBe(npmFile);
    expect(sqliteVecFile(`bun-${process.platform}-${process.arch}`)?.path).toBe(npmFile);
    const foreign = process.platform === "win32" ? "bun-darwin-arm64" : "bun-windows-x64";
    expect(sqliteVecFile(foreign)).toBeUndefined();
    expect(sqliteVecFile("bun-freebsd-x64")).toBeUndefined();
  });
});
