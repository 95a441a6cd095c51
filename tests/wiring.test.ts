/**
 * Every family is wired one way (docs/design.md "Layout"): its index.ts builds stores, then services
 * (with a runtime between them when it has one), then routes; every route factory of a family is
 * `(ctx, services)`, in that order, and the family calls each one with exactly those two names. Checked
 * on the source, so a factory written another way fails here, not in a reviewer's head.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./helpers/app.ts";

const FAMILIES = ["chat", "turns", "search", "agents"];

/** The parameter list of `export function NAME(...)`, balanced over nested brackets. */
function parameters(source: string, at: number): string {
  const open = source.indexOf("(", at);
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const c = source[i];
    if (c === "(" || c === "{" || c === "<" || c === "[") depth++;
    else if (c === ")" || c === "}" || c === ">" || c === "]") depth--;
    if (depth === 0) return source.slice(open + 1, i);
  }
  throw new Error("unbalanced parameter list");
}

/** Splits a parameter list at its top-level commas. */
function split(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === "(" || c === "{" || c === "<" || c === "[") depth++;
    else if (c === ")" || c === "}" || c === ">" || c === "]") depth--;
    else if (c === "," && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(list.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

/** Every `export function *Routes(` of a family's routes/ folder: its file, name and parameters. */
function routeFactories(family: string) {
  const dir = join(REPO_ROOT, "server", family, "routes");
  const found: { file: string; name: string; params: string[] }[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
    const source = readFileSync(join(dir, file), "utf8");
    for (const match of source.matchAll(/export function (\w+Routes)\b/g)) {
      found.push({
        file: `${family}/routes/${file}`,
        name: match[1] as string,
        params: split(parameters(source, match.index)),
      });
    }
  }
  return found;
}

describe("family wiring", () => {
  test("every route factory takes (ctx, services): the app's context first, then the services it calls", () => {
    const wrong: string[] = [];
    let count = 0;
    for (const family of FAMILIES) {
      for (const { file, name, params } of routeFactories(family)) {
        count++;
        const [ctx, services] = params;
        const ctxOk = ctx !== undefined && /(^ctx\b|AppContext|RoutesContext)/.test(ctx);
        const servicesOk = services !== undefined && /^(\{[^}]*\}|services)\s*:/.test(services);
        if (params.length !== 2 || !ctxOk || !servicesOk) wrong.push(`${file} ${name}(${params.join(", ")})`);
      }
    }
    expect(count).toBeGreaterThan(20);
    expect(wrong).toEqual([]);
  });

  test("every family's index.ts builds stores, then services, then routes, and calls each factory (ctx, services)", () => {
    const wrong: string[] = [];
    for (const family of FAMILIES) {
      const source = readFileSync(join(REPO_ROOT, "server", family, "index.ts"), "utf8");
      const steps = [`function ${family}Stores(`, `function ${family}Services(`];
      for (const step of steps) if (!source.includes(step)) wrong.push(`${family}/index.ts has no ${step}`);
      const create = source.slice(source.indexOf("create("));
      const order = ["Stores(ctx)", "Services(ctx, stores", "Routes(ctx, services)"].map((s) =>
        create.indexOf(s),
      );
      if (order.some((at, i) => at < 0 || at < (order[i - 1] ?? 0)))
        wrong.push(`${family}/index.ts create() does not build stores, services and routes in turn`);
      for (const call of source.matchAll(/\.use\((\w+Routes)\(([^)]*)\)\)/g))
        if (call[2] !== "ctx, services") wrong.push(`${family}/index.ts calls ${call[1]}(${call[2]})`);
    }
    expect(wrong).toEqual([]);
  });
});
