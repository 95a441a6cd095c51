/**
 * The chat family's inside follows the shape every family has (README, Layout): routes call services
 * only; services never see Elysia; stores are SQL over the shared storage; the runtime never reaches
 * up into services or routes. Checked on the real import graph (dependency-cruiser, type-only imports
 * included), plus the one TypeBox rule: pi's `typebox` 1.x is used in one file only.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { cruise, type IForbiddenRuleType } from "dependency-cruiser";
import { REPO_ROOT } from "../helpers/app.ts";

const CHAT = "^server/chat/";
const ELYSIA = "^node_modules/elysia/";

const RULES: IForbiddenRuleType[] = [
  {
    name: "routes-call-services-only",
    from: { path: `${CHAT}routes/` },
    to: { path: `${CHAT}(stores|runtime|migrations)/` },
  },
  { name: "services-never-see-elysia", from: { path: `${CHAT}services/` }, to: { path: ELYSIA } },
  {
    name: "services-never-reach-up",
    from: { path: `${CHAT}services/` },
    to: { path: `${CHAT}(routes/|index\\.ts$)` },
  },
  {
    name: "stores-are-sql-only",
    from: { path: `${CHAT}stores/` },
    to: { path: "^server/", pathNot: `^server/(chat/stores/|storage/|lib/)` },
  },
  {
    name: "runtime-never-reaches-up",
    from: { path: `${CHAT}runtime/` },
    to: { path: `${CHAT}(routes/|services/|index\\.ts$)` },
  },
];

async function violations(rules: IForbiddenRuleType[]): Promise<string[]> {
  const result = await cruise(
    ["server/chat"],
    {
      baseDir: REPO_ROOT,
      tsPreCompilationDeps: true,
      // Packages stay in the graph (a service importing elysia must show) but are not walked into.
      doNotFollow: { path: "node_modules" },
      validate: true,
      ruleSet: { forbidden: rules.map((rule) => ({ severity: "error", ...rule })) },
    },
    {},
    { tsConfig: { fileName: `${REPO_ROOT}/tsconfig.json` } },
  );
  if (typeof result.output === "string") throw new Error("expected a cruise result object");
  return result.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
}

describe("the chat family's layers", () => {
  test("routes -> services -> stores/runtime, and nothing the other way", async () => {
    expect(await violations(RULES)).toEqual([]);
  });

  test("the rules see real imports (each probe matches one that exists)", async () => {
    const probes: IForbiddenRuleType[] = [
      { name: "probe-routes-services", from: { path: `${CHAT}routes/` }, to: { path: `${CHAT}services/` } },
      { name: "probe-services-stores", from: { path: `${CHAT}services/` }, to: { path: `${CHAT}stores/` } },
      { name: "probe-services-runtime", from: { path: `${CHAT}services/` }, to: { path: `${CHAT}runtime/` } },
      { name: "probe-stores-storage", from: { path: `${CHAT}stores/` }, to: { path: "^server/storage/" } },
      { name: "probe-routes-elysia", from: { path: `${CHAT}routes/` }, to: { path: ELYSIA } },
    ];
    const found = await violations(probes);
    for (const { name } of probes)
      expect({ name, found: found.some((line) => line.startsWith(`${name}:`)) }).toEqual({
        name,
        found: true,
      });
  });

  test("pi's typebox 1.x is imported by the questionnaire tool only; the app's schemas use Elysia's", () => {
    const importers: string[] = [];
    for (const file of new Bun.Glob("{server,schemas}/**/*.ts").scanSync(REPO_ROOT))
      if (/from "typebox(\/[^"]*)?"/.test(readFileSync(`${REPO_ROOT}/${file}`, "utf8"))) importers.push(file);
    expect(importers).toEqual(["server/chat/runtime/questionnaire.ts"]);
  });
});
