/**
 * The built UI embedded in a compiled binary, or undefined when running from source (web.ts then serves
 * build/web/, which `npm start` / `npm test` build first). scripts/build.ts replaces this module while
 * compiling with file imports of every built file, so the executable carries the UI inside it.
 */
export const PREBUILT_WEB: Record<string, string> | undefined = undefined;
