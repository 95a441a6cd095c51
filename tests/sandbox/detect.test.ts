/**
 * The sandbox's jail detection run in the background (its probes as child processes at once, started
 * while the server's modules load) decides exactly what the synchronous detection decides: each is run
 * in a fresh process, since a process decides once.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/app.ts";
import { cleanEnv, finished } from "../helpers/server.ts";

async function decide(how: "detectSandbox" | "detectSandboxInBackground") {
  const script = `
    const isolation = await import(${JSON.stringify(join(REPO_ROOT, "server", "sandbox", "isolation.ts"))});
    const { plan, shellPlan, report } = await isolation.${how}();
    const shape = (p) => p && { ...p, cgroups: p.cgroups && Object.keys(p.cgroups).sort(), seccomp: Boolean(p.seccomp) };
    console.log(JSON.stringify({ report, plan: shape(plan), shellPlan: shape(shellPlan) }));`;
  const proc = Bun.spawn([process.execPath, "-e", script], {
    env: cleanEnv(),
    stdout: "pipe",
    stderr: "pipe",
  });
  const { code, stdout, stderr } = await finished(proc);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  return JSON.parse(stdout);
}

describe("jail detection", () => {
  test("in the background it reaches the synchronous decision", async () => {
    const [sync, background] = await Promise.all([
      decide("detectSandbox"),
      decide("detectSandboxInBackground"),
    ]);
    expect(background).toEqual(sync);
    // This host (CI, root, bubblewrap installed) jails; the comparison above is not of two "none"s.
    expect(sync.report.isolation).toBe(process.platform === "linux" ? "bubblewrap" : "none");
  });
});
