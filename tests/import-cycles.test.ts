/**
 * No import circle anywhere in the repository (issue 25): the server, the wire schemas, the terminal
 * client, the web UI, the desktop shell, scripts, benchmarks and the tests themselves, checked on the
 * real import graph (dependency-cruiser, type-only imports included: a circle of types is still one a
 * reader has to untangle). tests/architecture.test.ts keeps the layering rules inside server/.
 */
import { expect, test } from "bun:test";
import { cruise } from "dependency-cruiser";
import { REPO_ROOT } from "./helpers/app.ts";

const ROOTS = ["server", "schemas", "common", "cli", "web", "desktop", "scripts", "bench", "tests"];

test("no import circle in any folder of the repository; the jail's limits import no configuration", async () => {
  const result = await cruise(
    ROOTS,
    {
      baseDir: REPO_ROOT,
      tsPreCompilationDeps: true,
      doNotFollow: { path: "node_modules" },
      exclude: { path: "node_modules|^build/" },
      validate: true,
      ruleSet: {
        forbidden: [
          { name: "no-cycle", severity: "error", from: {}, to: { circular: true } },
          // The jail defines its own limit type; configuration maps the policy into it (config/sandbox-limits.ts).
          {
            name: "jail-limits-know-no-policy",
            severity: "error",
            from: { path: "^server/sandbox/limits\\.ts$" },
            to: { path: "^server/config/" },
          },
        ],
      },
    },
    {},
    { tsConfig: { fileName: `${REPO_ROOT}/tsconfig.json` } },
  );
  if (typeof result.output === "string") throw new Error("expected a cruise result object");
  const { summary, modules } = result.output;
  // Every root was read (a typo in ROOTS would pass silently otherwise).
  for (const root of ROOTS) expect(modules.some((m) => m.source.startsWith(`${root}/`))).toBe(true);
  const found = summary.violations.map((v) =>
    v.cycle ? v.cycle.map((step) => step.name).join(" -> ") : `${v.rule.name}: ${v.from} -> ${v.to}`,
  );
  expect([...new Set(found)]).toEqual([]);
}, 120_000);
