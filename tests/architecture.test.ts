/**
 * The dependency rules of docs/design.md §14, checked on the real import graph (dependency-cruiser,
 * type-only and dynamic imports included): no cycle in server/; http/ stays a low-level layer; the
 * shared layers never reach up into a family or the app; a family imports only its own folder and the
 * shared layers, never another family's internals; schemas/ is data only.
 */
import { describe, expect, test } from "bun:test";
import { cruise, type IForbiddenRuleType } from "dependency-cruiser";
import { REPO_ROOT } from "./helpers/app.ts";

const FAMILY = "^server/(chat|turns|search|agents)/";
/** What a family may import besides its own folder (and packages). */
const SHARED =
  "models/|storage/|sandbox/|http/|workspace/|auth/|config/|lib/|context\\.ts$|family\\.ts$|log\\.ts$|version\\.ts$";
/** The app layer: composition, start-up and the routes that need the app's context. */
const APP = "^server/(app|context|lifecycle|run|main|health|index-command|commands|family)\\.ts$";

const RULES: IForbiddenRuleType[] = [
  { name: "no-cycle", from: { path: "^server/" }, to: { circular: true } },
  {
    name: "http-is-low-level",
    from: { path: "^server/http/" },
    to: { path: "^server/", pathNot: "^server/(http/|log\\.ts$|version\\.ts$)" },
  },
  {
    name: "shared-layers-never-reach-up",
    from: { path: "^server/(models|storage|sandbox|config|auth|workspace|lib)/" },
    to: { path: `${FAMILY}|${APP}` },
  },
  {
    name: "a-family-imports-only-itself-and-shared-layers",
    from: { path: FAMILY },
    to: { path: "^server/", pathNot: `^server/($1/|${SHARED})` },
  },
  { name: "schemas-are-data", from: { path: "^schemas/" }, to: { path: "^server/" } },
  // Atrium's MCP server reaches the families through their HTTP routes in process, never their code.
  { name: "the-mcp-server-calls-families-over-http", from: { path: "^server/mcp/" }, to: { path: FAMILY } },
  // The terminal client talks to a server over HTTP only (its types come from schemas/).
  { name: "the-terminal-client-is-an-http-client", from: { path: "^cli/" }, to: { path: "^server/" } },
];

async function violations(rules: IForbiddenRuleType[]): Promise<string[]> {
  const result = await cruise(
    ["server", "schemas", "cli"],
    {
      baseDir: REPO_ROOT,
      tsPreCompilationDeps: true,
      doNotFollow: { path: "node_modules" },
      exclude: { path: "node_modules" },
      validate: true,
      ruleSet: { forbidden: rules.map((rule) => ({ severity: "error", ...rule })) },
    },
    {},
    { tsConfig: { fileName: `${REPO_ROOT}/tsconfig.json` } },
  );
  if (typeof result.output === "string") throw new Error("expected a cruise result object");
  const { summary, modules } = result.output;
  expect(modules.length).toBeGreaterThan(100);
  return summary.violations.map((v) => {
    const cycle = v.cycle ? `: ${v.cycle.map((step) => step.name).join(" -> ")}` : "";
    return `${v.rule.name}: ${v.from} -> ${v.to}${cycle}`;
  });
}

describe("the import graph", () => {
  test("server/ and schemas/ follow every layering rule", async () => {
    expect(await violations(RULES)).toEqual([]);
  });

  test("the rules do catch what they forbid (each would flag a real import of today's tree)", async () => {
    // The same rules, aimed at imports that exist and are allowed, must report them: a rule whose path
    // patterns matched nothing would pass silently.
    const found = await violations([
      { name: "probe-family-to-http", from: { path: "^server/chat/" }, to: { path: "^server/http/" } },
      { name: "probe-app-to-family", from: { path: "^server/app\\.ts$" }, to: { path: FAMILY } },
      {
        name: "probe-dynamic",
        from: { path: "^server/commands\\.ts$" },
        to: { path: "^server/index-command\\.ts$" },
      },
      { name: "probe-cli", from: { path: "^cli/" }, to: { path: "^schemas/" } },
      { name: "probe-mcp", from: { path: "^server/mcp/" }, to: { path: "^server/auth/" } },
    ]);
    for (const rule of [
      "probe-family-to-http",
      "probe-app-to-family",
      "probe-dynamic",
      "probe-cli",
      "probe-mcp",
    ])
      expect({ rule, found: found.some((line) => line.startsWith(`${rule}:`)) }).toEqual({
        rule,
        found: true,
      });
  });
});
