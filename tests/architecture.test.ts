/**
 * The dependency rules of docs/design.md §14, checked on the real import graph (dependency-cruiser,
 * type-only and dynamic imports included): no cycle in server/; http/ stays a low-level layer; the
 * shared layers never reach up into a family or the app; a family imports only its own folder and the
 * shared layers, never another family's internals; schemas/ is data only. The web UI and the terminal
 * client are HTTP clients: they never import server/, they take wire types from schemas/ with type-only
 * imports (which cost the bundle nothing), and they never declare a type of their own under a name
 * schemas/ exports (such a copy is how the clients' types drifted from the wire). common/ is runtime code
 * every side may import (the one stream reader): it imports nothing of the repository, so importing it
 * never pulls server/ into the UI's bundle.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cruise, type IForbiddenRuleType } from "dependency-cruiser";
import { REPO_ROOT } from "./helpers/app.ts";

const FAMILY = "^server/(chat|turns|search|agents)/";
/** What a family may import besides its own folder (and packages). */
const SHARED =
  "models/|storage/|sandbox/|http/|workspace/|auth/|config/|lib/|mcp-client/|context\\.ts$|family\\.ts$|log\\.ts$|version\\.ts$";
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
    from: { path: "^server/(models|storage|sandbox|config|auth|workspace|lib|mcp-client)/" },
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
  { name: "the-web-ui-is-an-http-client", from: { path: "^web/" }, to: { path: "^server/" } },
  {
    name: "common-stands-alone",
    from: { path: "^common/" },
    to: { path: "^(server|schemas|cli|web|tests|scripts|bench|desktop)/" },
  },
  {
    name: "clients-take-wire-types-only",
    from: { path: "^(web|cli)/" },
    to: { path: "^schemas/", dependencyTypesNot: ["type-only"] },
  },
];

async function violations(rules: IForbiddenRuleType[]): Promise<string[]> {
  const result = await cruise(
    ["server", "schemas", "common", "cli", "web"],
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
  test("server/, schemas/, common/, cli/ and web/ follow every layering rule", async () => {
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
      {
        name: "probe-web",
        from: { path: "^web/" },
        to: { path: "^schemas/", dependencyTypes: ["type-only"] },
      },
      { name: "probe-mcp", from: { path: "^server/mcp/" }, to: { path: "^server/auth/" } },
      { name: "probe-common", from: { path: "^(web|cli)/" }, to: { path: "^common/" } },
    ]);
    for (const rule of [
      "probe-family-to-http",
      "probe-app-to-family",
      "probe-dynamic",
      "probe-cli",
      "probe-web",
      "probe-mcp",
      "probe-common",
    ])
      expect({ rule, found: found.some((line) => line.startsWith(`${rule}:`)) }).toEqual({
        rule,
        found: true,
      });
  });
});

/** Every .ts and .tsx file beneath a folder of the repository. */
function sources(folder: string): string[] {
  return readdirSync(join(REPO_ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => /\.tsx?$/.test(name))
    .map((name) => join(folder, name));
}

/** The names schemas/ exports (each schema's const and the type derived from it). */
function wireNames(): Set<string> {
  const names = new Set<string>();
  for (const file of sources("schemas"))
    for (const m of readFileSync(join(REPO_ROOT, file), "utf8").matchAll(
      /^export (?:const|type|interface) ([A-Za-z_]\w*)/gm,
    ))
      names.add(m[1] as string);
  return names;
}

/** The types a source declares at the top of a line under a name schemas/ exports. */
function wireCopies(source: string, names: Set<string>): string[] {
  return [...source.matchAll(/^(?:export )?(?:interface|type) ([A-Za-z_]\w*)\b/gm)]
    .map((m) => m[1] as string)
    .filter((name) => names.has(name));
}

describe("wire types have one source", () => {
  const names = wireNames();

  test("the check reads schemas/ and recognises a copy", () => {
    for (const name of ["TurnStreamEvent", "ChatStreamEvent", "UiMessage", "TurnRecord", "Agent"])
      expect(names.has(name)).toBe(true);
    const planted =
      "export interface UiMessage {\n  id: string;\n}\ntype TurnStreamEvent = { type: string };\n";
    expect(wireCopies(planted, names)).toEqual(["UiMessage", "TurnStreamEvent"]);
    // Imports and re-exports are not declarations.
    expect(wireCopies('import type { UiMessage } from "x";\nexport type { UiMessage };\n', names)).toEqual(
      [],
    );
  });

  test("web/ and cli/ declare no type under a name schemas/ exports", () => {
    const found = [...sources("web"), ...sources("cli")].flatMap((file) =>
      wireCopies(readFileSync(join(REPO_ROOT, file), "utf8"), names).map((name) => `${file}: ${name}`),
    );
    expect(found).toEqual([]);
  });
});
