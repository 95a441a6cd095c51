/**
 * What this program calls itself in --help, errors and hints: the compiled binary is `atrium`; from a
 * checkout it is `npx bun server/main.ts` (Bun comes from npm, so it is not on PATH). So a hint a user copies names a command that exists where they are.
 */

/** True inside a `bun build --compile` executable (its entry module lives in Bun's embedded file system). */
export function isCompiledBinary(main: string = Bun.main): boolean {
  return main.startsWith("/$bunfs/") || main.startsWith("B:\\~BUN");
}

/** The command that starts this server, as a user would type it. */
export function programName(main: string = Bun.main): string {
  return isCompiledBinary(main) ? "atrium" : "npx bun server/main.ts";
}
