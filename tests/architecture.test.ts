/**
 * The dependency rules of docs/design.md §14, checked on the real import graph (dependency-cruiser,
 * type-only and dynamic imports included): no cycle in server/; http/ stays a low-level layer; the
 * shared layers never reach up into a family or the app; a family imports only its own folder and the
 * shared layers, never another family's internals; schemas/ is data only. The web UI and the terminal
 * client are HTTP clients: they never import server/, they take wire types from schemas/ with type-only
 * imports (which cost the bundle nothing), and they never declare a type of their own under a name
 * schemas/ exports (such a copy is how the clients' types drifted from the wire). The shared layers
 * never name a family's route path: what a route needs of them it declares (server/http/route-policy.ts).
 * common/ is runtime code every side may import (the one stream reader): it imports nothing of the
 * repository, so importing it never pulls server/ into the UI's bundle.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cruise, type IForbiddenRuleType } from "dependency-cruiser";
import type { AnyElysia } from "elysia";
import ts from "typescript";
import { FAMILIES } from "../server/app.ts";
import { createTestApp, REPO_ROOT } from "./helpers/app.ts";

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

/** The files every family goes through: they read what a route declares, never name its path. */
const SHARED_LAYERS = [
  ...sources("server/http"),
  ...sources("server/auth"),
  "server/app.ts",
  "server/context.ts",
];

/** The literal start of each family route's path, up to its first parameter (`/api/sandbox/preview`). */
async function familyRoutePaths(): Promise<string[]> {
  const t = await createTestApp({ compose: false, env: { APP_CHAT_RUNTIME_REQUIRE_AUTH: "1" } });
  try {
    const paths = FAMILIES.flatMap((f) => (t.family(f.name).routes as AnyElysia).routes).map((route) => {
      const literal: string[] = [];
      for (const segment of route.path.split("/").slice(1)) {
        if (segment.startsWith(":") || segment === "*" || segment === "") break;
        literal.push(segment);
      }
      return `/${literal.join("/")}`;
    });
    return [...new Set(paths)].filter((path) => path !== "/");
  } finally {
    await t.close();
  }
}

/** The path-like string literals of a source (quotes, template pieces), without a trailing slash. */
function pathLiterals(source: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) {
      const text = node.text.replace(/\/+$/, "");
      if (text.startsWith("/") && text.length > 1) found.push(text);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile("source.ts", source, ts.ScriptTarget.Latest, true));
  return found;
}

/**
 * The literals of a source that name a family route: the route's path, a path beneath it, or a prefix
 * of it at least two segments long (`/api/sandbox` names the sandbox routes; `/api` names no one).
 */
function namedFamilyPaths(source: string, routes: string[]): string[] {
  return pathLiterals(source).filter((literal) =>
    routes.some(
      (route) =>
        literal === route ||
        literal.startsWith(`${route}/`) ||
        (route.startsWith(`${literal}/`) && literal.split("/").length > 2),
    ),
  );
}

describe("the shared layers read a route's policy, never its path", () => {
  let routes: string[] = [];
  test("the check knows the family routes and recognises a path named in code", async () => {
    routes = await familyRoutePaths();
    for (const path of ["/api/sandbox/preview", "/api/webhooks/sandbox", "/v1/agents", "/search/local"])
      expect({ path, known: routes.includes(path) }).toEqual({ path, known: true });
    const planted = [
      'if (path.startsWith("/api/sandbox/preview/")) return true;',
      "const hook = `/api/webhooks/sandbox`;",
      'const all = "/api/sandbox";',
      '// a comment naming "/v1/agents" is not code',
      'const own = ["/health", "/swagger", "/api/auth/"];',
    ].join("\n");
    expect(namedFamilyPaths(planted, routes)).toEqual([
      "/api/sandbox/preview",
      "/api/webhooks/sandbox",
      "/api/sandbox",
    ]);
  });

  test("server/http, server/auth, app.ts and context.ts name no family route path", async () => {
    if (routes.length === 0) routes = await familyRoutePaths();
    const found = SHARED_LAYERS.flatMap((file) =>
      namedFamilyPaths(readFileSync(join(REPO_ROOT, file), "utf8"), routes).map((p) => `${file}: ${p}`),
    );
    expect(found).toEqual([]);
  });
});

/** Every name a file of server/ exports by declaration (functions, classes, constants, types). */
function exportedNames(source: string): string[] {
  return [
    ...source.matchAll(
      /^export (?:declare )?(?:default )?(?:async )?(?:function\*?|class|const|let|var|interface|type|enum|abstract class) ([A-Za-z_$][\w$]*)/gm,
    ),
  ].map((m) => m[1] as string);
}

describe("exported names are unique across server/", () => {
  test("the check reads every kind of export", () => {
    const planted =
      "export async function main() {}\nexport const refusal = 1;\nexport interface RunOptions {}\nexport type A = 1;\nexport class B {}\nconst hidden = 2;\n";
    expect(exportedNames(planted)).toEqual(["main", "refusal", "RunOptions", "A", "B"]);
  });

  test("no two files of server/ export the same name (a newcomer greps one name, finds one thing)", () => {
    const files = new Map<string, string[]>();
    for (const file of sources("server"))
      for (const name of exportedNames(readFileSync(join(REPO_ROOT, file), "utf8")))
        files.set(name, [...(files.get(name) ?? []), file]);
    const twice = [...files]
      .filter(([, where]) => where.length > 1)
      .map(([name, where]) => `${name}: ${where.join(", ")}`);
    expect(twice).toEqual([]);
  });
});
