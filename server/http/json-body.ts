/**
 * Limits on a parsed JSON request body, so hostile JSON is a 4xx before any handler or store sees it.
 *
 * `JSON.parse` accepts what later code cannot handle: nesting a million levels deep (recursive code
 * such as `JSON.stringify` in a store then overflows the stack: a 500), numbers that overflow to
 * Infinity (`1e400`) or that a double cannot hold exactly (integers past ±2^53, silently rounded), and
 * `__proto__` keys that reach an object's prototype when merged with `Object.assign` or a deep merge.
 * The walk after parsing is bounded by the depth limit, so it cannot overflow the stack itself.
 */
import type { Issue } from "./validation.ts";

/** Deepest nesting of objects and arrays a body may have; the APIs' own bodies need a handful. */
export const MAX_JSON_DEPTH = 64;

/** The first problem in a parsed JSON body (an object), or undefined when it is within the limits. */
export function inspectJson(body: unknown): Issue | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { loc: ["body"], msg: "Input should be a valid dictionary or object", type: "dict_type" };
  }
  return inspect(body, ["body"], 0);
}

/** The first problem in a parsed value; `depth` is how many objects and arrays enclose it. */
function inspect(value: unknown, path: (string | number)[], depth: number): Issue | undefined {
  if (typeof value === "number") return numberIssue(value, path);
  if (typeof value !== "object" || value === null) return undefined;
  if (depth >= MAX_JSON_DEPTH) {
    return {
      loc: ["body"],
      msg: `JSON should nest objects and arrays at most ${MAX_JSON_DEPTH} levels deep`,
      type: "json_too_deep",
    };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const issue = inspect(value[i], path, depth + 1);
      path.pop();
      if (issue) return issue;
    }
    return undefined;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const child = record[key];
    if (key === "__proto__" || (key === "constructor" && isPrototypeCarrier(child))) {
      return { loc: [...path, key], msg: `The key '${key}' is not allowed`, type: "forbidden_key" };
    }
    path.push(key);
    const issue = inspect(child, path, depth + 1);
    path.pop();
    if (issue) return issue;
  }
  return undefined;
}

function numberIssue(value: number, path: (string | number)[]): Issue | undefined {
  if (!Number.isFinite(value)) {
    return { loc: [...path], msg: "Input should be a finite number", type: "finite_number" };
  }
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
    return {
      loc: [...path],
      msg: `Number should be between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER} (larger values cannot be held exactly)`,
      type: "number_too_large",
    };
  }
  return undefined;
}

/** `{"constructor": {"prototype": ...}}`: the other path a deep merge takes to a prototype. */
function isPrototypeCarrier(value: unknown): boolean {
  return typeof value === "object" && value !== null && Object.hasOwn(value, "prototype");
}
