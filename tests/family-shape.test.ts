/**
 * Every family has the same inside (docs/design.md §14): index.ts wires stores → services → routes;
 * routes/ (thin: parse, call a service, map) never touch a store, the runtime or SQL; services/ never
 * see Elysia and never reach up; stores/ are SQL over the shared storage; the runtime (search: its
 * indexing pipeline) never reaches up into services or routes. Checked on the real import graph
 * (dependency-cruiser, type-only imports included). Besides: exported class names are unique across
 * server/ (a newcomer never meets two `ChatService`s), and pi's `typebox` 1.x is used only by the pi tools chat defines.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { cruise, type IForbiddenRuleType } from "dependency-cruiser";
import { REPO_ROOT } from "./helpers/app.ts";

const FAMILIES = ["chat", "turns", "search", "agents"] as const;
const ELYSIA = "^node_modules/elysia/";
/** What a family runs below its services: a runtime, and for search its indexing pipeline. */
const RUNTIME = "(runtime|indexing)/";

function rules(family: string): IForbiddenRuleType[] {
  const f = `^server/${family}/`;
  return [
    {
      name: "routes-call-services-only",
      from: { path: `${f}routes/` },
      to: { path: `${f}(stores/|migrations/|${RUNTIME})` },
    },
    { name: "routes-never-run-sql", from: { path: `${f}routes/` }, to: { path: "^server/storage/" } },
    { name: "services-never-see-elysia", from: { path: `${f}services/` }, to: { path: ELYSIA } },
    {
      name: "services-never-reach-up",
      from: { path: `${f}services/` },
      to: { path: `${f}(routes/|index\\.ts$)` },
    },
    {
      // A store may throw the one error type and find an owner's folder (turns keeps files on disk);
      // a type-only import (the record types it stores) carries no behaviour.
      name: "stores-are-sql-only",
      from: { path: `${f}stores/` },
      to: {
        path: "^server/",
        pathNot: `^server/(${family}/stores/|storage/|lib/|workspace/|http/errors\\.ts$)`,
        dependencyTypesNot: ["type-only"],
      },
    },
    { name: "stores-never-see-elysia", from: { path: `${f}stores/` }, to: { path: ELYSIA } },
    {
      name: "runtime-never-reaches-up",
      from: { path: `${f}${RUNTIME}` },
      to: { path: `${f}(routes/|services/|index\\.ts$)` },
    },
  ];
}

async function violations(family: string, ruleSet: IForbiddenRuleType[]): Promise<string[]> {
  const result = await cruise(
    [`server/${family}`],
    {
      baseDir: REPO_ROOT,
      tsPreCompilationDeps: true,
      // Packages stay in the graph (a service importing elysia must show) but are not walked into.
      doNotFollow: { path: "node_modules" },
      validate: true,
      ruleSet: { forbidden: ruleSet.map((rule) => ({ severity: "error", ...rule })) },
    },
    {},
    { tsConfig: { fileName: `${REPO_ROOT}/tsconfig.json` } },
  );
  if (typeof result.output === "string") throw new Error("expected a cruise result object");
  return result.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
}

const isDir = (path: string) => existsSync(path) && statSync(path).isDirectory();

describe.each(FAMILIES)("the %s family", (family) => {
  test("has index.ts, routes/, services/, stores/ and migrations/", () => {
    const root = `${REPO_ROOT}/server/${family}`;
    expect(existsSync(`${root}/index.ts`)).toBe(true);
    const folders = ["routes", "services", "stores", "migrations"].filter((name) => isDir(`${root}/${name}`));
    expect(folders).toEqual(["routes", "services", "stores", "migrations"]);
  });

  test("routes -> services -> stores/runtime, and nothing the other way", async () => {
    expect(await violations(family, rules(family))).toEqual([]);
  });

  test("the rules see real imports (each probe matches one that exists)", async () => {
    const f = `^server/${family}/`;
    const probes: IForbiddenRuleType[] = [
      { name: "probe-routes-services", from: { path: `${f}routes/` }, to: { path: `${f}services/` } },
      { name: "probe-routes-elysia", from: { path: `${f}routes/` }, to: { path: ELYSIA } },
      {
        name: "probe-stores-storage",
        from: { path: `${f}(stores|migrations)/` },
        to: { path: "^server/storage/" },
      },
    ];
    const found = await violations(family, probes);
    expect(probes.filter(({ name }) => !found.some((line) => line.startsWith(`${name}:`)))).toEqual([]);
  });
});

describe("names across server/", () => {
  const sources = [...new Bun.Glob("{server,schemas}/**/*.ts").scanSync(REPO_ROOT)].map((file) => ({
    file,
    text: readFileSync(`${REPO_ROOT}/${file}`, "utf8"),
  }));

  test("no two exported classes share a name", () => {
    const seen = new Map<string, string[]>();
    for (const { file, text } of sources)
      for (const match of text.matchAll(/^export (?:abstract )?class (\w+)/gm))
        seen.set(match[1] as string, [...(seen.get(match[1] as string) ?? []), file]);
    expect(seen.size).toBeGreaterThan(20);
    expect([...seen].filter(([, files]) => files.length > 1)).toEqual([]);
  });

  test("pi's typebox 1.x is loaded with pi only (models/pi-sdk.ts); the app's schemas use Elysia's", () => {
    const importers = sources
      .filter(({ text }) => /from "typebox(\/[^"]*)?"|import\("typebox(\/[^"]*)?"\)/.test(text))
      .map(({ file }) => file);
    expect(importers.sort()).toEqual(["server/models/pi-sdk.ts"]);
  });
});
