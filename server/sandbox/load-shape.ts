/**
 * What every interpreter is loaded with (worker.ts), from scratch or before its snapshot was made; the
 * snapshot's cache key names it (snapshot.ts). A module of its own so that the sandbox worker, which
 * needs only this, does not load the server-side snapshot cache and the jail modules behind it.
 */
export const LOAD_SHAPE = {
  // Emscripten otherwise names the program after this script's path on the host (sys.executable).
  sysExecutable: "python",
  env: { HOME: "/home/pyodide" },
  packages: [] as string[],
};
