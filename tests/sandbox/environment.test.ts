/**
 * The sandbox environment carries nothing of the host: Python's os.environ holds only pyodide's own
 * defaults (no `_` naming the checkout's main.ts, which Emscripten used to put there), sys.executable
 * names no host path, and the real process environment (read through JavaScript from /proc) is empty
 * but for bubblewrap's working dir inside the jail. Checked with and without the jail.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { homedir } from "node:os";
import { InterpreterPool } from "../../server/sandbox/interpreter-pool.ts";
import { REPO_ROOT } from "../helpers/app.ts";
import { viaJs } from "../helpers/jail.ts";

setDefaultTimeout(120_000);

/** What pyodide itself puts in os.environ: nothing of the host. */
const PYODIDE_DEFAULTS = [
  "HOME",
  "LANG",
  "LD_LIBRARY_PATH",
  "LOGNAME",
  "PATH",
  "PWD",
  "PYTHONINSPECT",
  "USER",
];

const pools: InterpreterPool[] = [];
afterAll(() => {
  for (const pool of pools) pool.close();
});

for (const isolation of ["bubblewrap", "none"] as const) {
  describe(`isolation ${isolation}`, () => {
    test("os.environ, sys.executable and the process environment carry nothing of the host", async () => {
      const pool = new InterpreterPool({ warm: 0, isolation });
      pools.push(pool);
      const py = await pool.acquire();
      try {
        await py.init([], {}, 20_000);
        const python = await py.run(
          "import os, sys, json\nprint(json.dumps([dict(os.environ), sys.executable]))",
          {
            timeoutMs: 30_000,
          },
        );
        const [environ, executable] = JSON.parse(python.stdout) as [Record<string, string>, string];
        expect(Object.keys(environ).sort()).toEqual(PYODIDE_DEFAULTS);
        const js = await py.run(
          viaJs(`const fs = process.getBuiltinModule("fs");
return { self: fs.readFileSync("/proc/self/environ", "latin1"), env: process.env };`),
          { timeoutMs: 30_000 },
        );
        const real = JSON.parse(js.stdout) as { self: string; env: Record<string, string> };
        const all = JSON.stringify([environ, executable, real]);
        for (const host of [REPO_ROOT, homedir(), process.cwd()]) expect(all).not.toContain(host);
        const entries = real.self.split("\0").filter(Boolean);
        if (isolation === "bubblewrap") expect(entries).toEqual(["PWD=/scratch"]);
        else expect(entries).toEqual([]);
      } finally {
        pool.release(py);
      }
    });
  });
}
