/** What the program calls itself: `atrium` inside the compiled binary, a runnable command from a checkout. */
import { expect, test } from "bun:test";
import { isCompiledBinary, programName } from "../../server/lib/program.ts";

test("the compiled binary is atrium; a checkout names a command that runs without Bun on PATH", () => {
  expect(isCompiledBinary("/$bunfs/root/atrium")).toBe(true);
  expect(programName("/$bunfs/root/atrium")).toBe("atrium");
  expect(programName("B:\\~BUN\\root\\atrium.exe")).toBe("atrium");
  expect(isCompiledBinary("/home/me/atrium/server/main.ts")).toBe(false);
  expect(programName("/home/me/atrium/server/main.ts")).toBe("npx bun server/main.ts");
});
