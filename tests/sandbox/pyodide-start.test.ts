/**
 * How the sandbox worker loads pyodide (server/sandbox/pyodide-start.ts), in this process: the runtime
 * compiled early is the one pyodide instantiates, the Emscripten module loads untranspiled, the
 * interpreter works, and WebAssembly.instantiate is the engine's own again once pyodide is loaded (no
 * stand-in is left for code that runs later). A pyodide folder whose files are not what the faster paths
 * expect still loads, by pyodide's ordinary path.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pyodideDir } from "../../server/sandbox/isolation.ts";
import { PyodideLoader } from "../../server/sandbox/pyodide-start.ts";
import { tempDir } from "../helpers/tmp.ts";

setDefaultTimeout(300_000);

const altered = tempDir("atrium-pyodide-start-");
afterAll(() => altered.remove());

test("the early compile and the untranspiled module are used, and instantiate is restored", async () => {
  const original = WebAssembly.instantiate;
  const loader = new PyodideLoader(pyodideDir());
  const pyodide = await loader.load({});
  expect(loader.used).toEqual({ earlyCompile: true, untranspiled: true, patched: ["table", "restore"] });
  expect(WebAssembly.instantiate).toBe(original);
  expect(pyodide.runPython("1 + 41")).toBe(42);
});

test("a module text that is not as expected loads by pyodide's ordinary path", async () => {
  const dir = pyodideDir();
  for (const name of readdirSync(dir)) copyFileSync(join(dir, name), join(altered.path, name));
  // An `import.meta` the untranspiled path does not write in: it must leave the file to pyodide.
  const path = join(altered.path, "pyodide.asm.mjs");
  writeFileSync(path, `${readFileSync(path, "utf8")}\nexport const where = import.meta.dir;\n`);
  const original = WebAssembly.instantiate;
  const loader = new PyodideLoader(altered.path);
  const pyodide = await loader.load({});
  expect(loader.used).toEqual({ earlyCompile: true, untranspiled: false, patched: [] });
  expect(WebAssembly.instantiate).toBe(original);
  expect(pyodide.runPython("2 * 21")).toBe(42);
});
