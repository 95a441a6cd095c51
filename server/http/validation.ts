/**
 * Turns TypeBox validation errors into plain issues `{loc, msg, type}` in FastAPI's vocabulary
 * ("missing", "string_type", "int_parsing", ...), which every family's error envelope is built from.
 */
import { ValueErrorType as E, type ValueError } from "@sinclair/typebox/errors";

export interface Issue {
  /** Where: the request part first ("body", "query", "path", "header"), then keys and indexes. */
  loc: (string | number)[];
  msg: string;
  type: string;
}

const PART: Record<string, string> = {
  body: "body",
  query: "query",
  params: "path",
  headers: "header",
  cookie: "cookie",
};

/** One issue per location: TypeBox reports a missing key several times (required, then type). */
export function issuesFrom(part: string, errors: ValueError[]): Issue[] {
  const seen = new Set<string>();
  const issues: Issue[] = [];
  for (const error of errors) {
    const loc = [PART[part] ?? part, ...pathParts(error.path)];
    const key = loc.join("\u0000");
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ loc, ...describe(error) });
  }
  return issues;
}

function pathParts(path: string): (string | number)[] {
  if (!path) return [];
  return path
    .slice(1)
    .split("/")
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

function describe(error: ValueError): Omit<Issue, "loc"> {
  const s = error.schema as Record<string, unknown>;
  if (error.value === undefined && error.type !== E.ObjectAdditionalProperties) {
    return { type: "missing", msg: "Field required" };
  }
  // A schema's own text for its failures (Elysia's `error` option) says more than a generic one.
  if (typeof s.error === "string") return { type: "value_error", msg: s.error };
  switch (error.type) {
    case E.String:
      return { type: "string_type", msg: "Input should be a valid string" };
    case E.StringMinLength:
      return {
        type: "string_too_short",
        msg: `String should have at least ${s.minLength} character${plural(s.minLength)}`,
      };
    case E.StringMaxLength:
      return {
        type: "string_too_long",
        msg: `String should have at most ${s.maxLength} character${plural(s.maxLength)}`,
      };
    case E.StringPattern:
      return { type: "string_pattern_mismatch", msg: `String should match pattern '${s.pattern}'` };
    case E.StringFormat:
      return { type: "value_error", msg: `String should be a valid ${s.format}` };
    case E.Integer:
    case E.Number:
      return typeof error.value === "string"
        ? {
            type: "int_parsing",
            msg: "Input should be a valid integer, unable to parse string as an integer",
          }
        : {
            type: error.type === E.Integer ? "int_type" : "float_type",
            msg: `Input should be a valid ${error.type === E.Integer ? "integer" : "number"}`,
          };
    case E.IntegerMinimum:
    case E.NumberMinimum:
      return { type: "greater_than_equal", msg: `Input should be greater than or equal to ${s.minimum}` };
    case E.IntegerMaximum:
    case E.NumberMaximum:
      return { type: "less_than_equal", msg: `Input should be less than or equal to ${s.maximum}` };
    case E.IntegerExclusiveMinimum:
    case E.NumberExclusiveMinimum:
      return { type: "greater_than", msg: `Input should be greater than ${s.exclusiveMinimum}` };
    case E.IntegerExclusiveMaximum:
    case E.NumberExclusiveMaximum:
      return { type: "less_than", msg: `Input should be less than ${s.exclusiveMaximum}` };
    case E.Boolean:
      return { type: "bool_type", msg: "Input should be a valid boolean" };
    case E.Array:
      return { type: "list_type", msg: "Input should be a valid list" };
    case E.ArrayMaxItems:
      return { type: "too_long", msg: `List should have at most ${s.maxItems} item${plural(s.maxItems)}` };
    case E.ArrayMinItems:
      return { type: "too_short", msg: `List should have at least ${s.minItems} item${plural(s.minItems)}` };
    case E.ArrayUniqueItems:
      return { type: "value_error", msg: "List items should be unique" };
    case E.Object:
      return { type: "dict_type", msg: "Input should be a valid dictionary or object" };
    case E.ObjectAdditionalProperties:
    // `additionalProperties: Never` (a schema that refuses unknown keys the normalizer would drop).
    case E.Never:
      return { type: "extra_forbidden", msg: "Extra inputs are not permitted" };
    case E.Literal:
      return { type: "literal_error", msg: `Input should be ${JSON.stringify(s.const)}` };
    case E.Union:
      return describeUnion(error);
    default:
      return { type: "value_error", msg: error.message };
  }
}

/** Unions are mostly enums (a union of literals) or Elysia's numeric query coercion (number | numeric string). */
function describeUnion(error: ValueError): Omit<Issue, "loc"> {
  const options = ((error.schema as { anyOf?: Record<string, unknown>[] }).anyOf ?? []) as Record<
    string,
    unknown
  >[];
  const literals = options.filter((o) => "const" in o).map((o) => JSON.stringify(o.const));
  if (literals.length === options.length && literals.length > 0) {
    const list =
      literals.length > 1 ? `${literals.slice(0, -1).join(", ")} or ${literals.at(-1)}` : literals[0];
    return { type: "enum", msg: `Input should be ${list}` };
  }
  const numeric = options.find((o) => o.type === "integer" || o.type === "number");
  if (numeric) {
    const kind = numeric.type === "integer" ? "integer" : "number";
    const n = Number(error.value);
    const parsed =
      typeof error.value === "number" ||
      (typeof error.value === "string" && error.value.trim() !== "" && !Number.isNaN(n));
    if (!parsed)
      return {
        type: kind === "integer" ? "int_parsing" : "float_parsing",
        msg: `Input should be a valid ${kind}`,
      };
    if (kind === "integer" && !Number.isInteger(n))
      return {
        type: "int_from_float",
        msg: "Input should be a valid integer, got a number with a fractional part",
      };
    if (typeof numeric.minimum === "number" && n < numeric.minimum)
      return {
        type: "greater_than_equal",
        msg: `Input should be greater than or equal to ${numeric.minimum}`,
      };
    if (typeof numeric.maximum === "number" && n > numeric.maximum)
      return { type: "less_than_equal", msg: `Input should be less than or equal to ${numeric.maximum}` };
  }
  return { type: "value_error", msg: "Input does not match any allowed form" };
}

function plural(n: unknown) {
  return n === 1 ? "" : "s";
}
