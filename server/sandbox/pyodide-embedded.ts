/**
 * pyodide's runtime files as embedded in the compiled binary: file name → path inside the executable.
 * From source this is undefined (node_modules has the files); `npm run build` (scripts/build.ts) swaps
 * this module for one that imports the files with `{ type: "file" }`, which puts them in the binary.
 */
export const EMBEDDED_PYODIDE: { version: string; files: Record<string, string> } | undefined = undefined;
