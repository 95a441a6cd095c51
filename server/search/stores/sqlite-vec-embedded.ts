/**
 * sqlite-vec's loadable extension as embedded in the compiled binary: the path of the file inside the
 * executable, its name on disk and its SHA-256. From source this is undefined (the `sqlite-vec` package
 * finds its platform build in node_modules); `npm run build` (scripts/build.ts) swaps this module for one
 * that imports the platform's file with `{ type: "file" }`, which puts it in the binary.
 */
export interface EmbeddedSqliteVec {
  version: string;
  /** The file's name in its package (`vec0.so`, `vec0.dylib`, `vec0.dll`): SQLite wants the suffix. */
  name: string;
  /** Where the bundled file is read from (a `/$bunfs/` path inside the executable). */
  path: string;
  /** Hex SHA-256 of the file, taken at build time. */
  sha256: string;
}

export const EMBEDDED_SQLITE_VEC: EmbeddedSqliteVec | undefined = undefined;
