/**
 * What Swagger UI shows a user must work: every example in the OpenAPI document validates against the
 * schema it illustrates (a schema's `example`/`examples`, a parameter's or a media type's), and the
 * page loads its document from /swagger and /swagger/ alike.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import Schema from "typebox/schema";
import { createTestApp, type TestApp } from "../helpers/app.ts";

type Json = Record<string, unknown>;
let t: TestApp;
let doc: Json & { components?: Json; paths: Record<string, Record<string, Json>> };

beforeAll(async () => {
  t = await createTestApp();
  doc = await (await t.request("/swagger/json")).json();
});
afterAll(() => t.close());

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Keywords that make an object a schema (as opposed to a parameter, media type or map of them). */
const SCHEMA_KEYS = ["type", "properties", "items", "anyOf", "oneOf", "allOf", "enum", "const", "$ref"];

interface Example {
  where: string;
  schema: Json;
  value: unknown;
}

/** Every example in the document with the schema it must satisfy. */
function examples(node: unknown, where: string, out: Example[] = []): Example[] {
  if (Array.isArray(node)) for (const [i, item] of node.entries()) examples(item, `${where}/${i}`, out);
  if (!isObject(node)) return out;
  const isSchema = SCHEMA_KEYS.some((key) => key in node);
  const { example, examples: many } = node as { example?: unknown; examples?: unknown };
  if (isSchema) {
    if (example !== undefined) out.push({ where, schema: node, value: example });
    if (Array.isArray(many))
      for (const [i, value] of many.entries()) out.push({ where: `${where}[${i}]`, schema: node, value });
  } else if (isObject(node.schema)) {
    // A parameter or a media type: its examples illustrate its schema.
    if (example !== undefined) out.push({ where, schema: node.schema, value: example });
    if (isObject(many))
      for (const [name, entry] of Object.entries(many))
        if (isObject(entry) && "value" in entry)
          out.push({ where: `${where}/examples/${name}`, schema: node.schema, value: entry.value });
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === "example" || (key === "examples" && (isSchema || isObject(many)))) continue;
    examples(value, `${where}/${key}`, out);
  }
  return out;
}

/** Validates against the schema with the document's components beside it, so `#/components/...` resolves. */
function check(schema: Json, value: unknown): string | undefined {
  const root = { ...schema, components: doc.components };
  const compiled = Schema.Compile(root as Parameters<typeof Schema.Compile>[0]);
  if (compiled.Check(value)) return undefined;
  const [, errors] = compiled.Errors(value) as unknown as [boolean, unknown[]];
  return JSON.stringify(errors?.[0] ?? "invalid").slice(0, 300);
}

test("the checker refuses what a schema forbids (so a pass below means something)", () => {
  expect(check({ type: "array", items: { type: "object" } }, "string")).toBeDefined();
  expect(check({ type: "object", required: ["a"], properties: { a: { type: "string" } } }, {})).toBeDefined();
  expect(check({ type: "string", minLength: 1 }, "x")).toBeUndefined();
});

test("every example in the OpenAPI document validates against its schema", () => {
  const found = examples(doc.paths, "paths").concat(examples(doc.components, "components"));
  const invalid = found.flatMap(({ where, schema, value }) => {
    const error = check(schema, value);
    return error ? [{ where, value, error }] : [];
  });
  expect(invalid).toEqual([]);
  // The request bodies a user runs from Swagger UI carry examples.
  expect(found.length).toBeGreaterThan(60);
});

test("the examples Swagger UI offers for the mutating routes it runs are declared", () => {
  const body = (path: string, method = "post") =>
    (doc.paths[path]?.[method] as { requestBody?: { content?: Record<string, { schema?: Json }> } })
      ?.requestBody?.content?.["application/json"]?.schema;
  for (const path of ["/api/chat", "/api/sessions/{session_id}/turns", "/search/local", "/v1/agents"]) {
    const schema = body(path);
    expect({ path, examples: Array.isArray(schema?.examples) && schema.examples.length > 0 }).toEqual({
      path,
      examples: true,
    });
  }
  const turn = doc.paths["/api/sessions/{session_id}/turns"]?.post as { parameters: Json[] };
  const key = turn.parameters.find(
    (p) => p.in === "header" && String(p.name).toLowerCase() === "idempotency-key",
  );
  expect(key).toMatchObject({ required: true });
  // Swagger UI fills a parameter's field with the parameter's own `example`.
  expect(typeof key?.example).toBe("string");
});

test("/swagger and /swagger/ both load the document the page names", async () => {
  for (const page of ["/swagger", "/swagger/"]) {
    // The page names its start-up script, which names the document; both resolved as a browser would.
    const html = await (await t.request(page)).text();
    const script = html.match(/<script src="([^"]*start\.js)"/)?.[1];
    expect(script).toBeDefined();
    const start = await (
      await t.request(new URL(script as string, `http://localhost${page}`).pathname)
    ).text();
    const spec = start.match(/"url":"([^"]+)"/)?.[1];
    expect(spec).toBeDefined();
    // Resolved as the browser resolves it against the page's own URL.
    const url = new URL(spec as string, `http://localhost${page}`);
    const response = await t.request(url.pathname);
    expect({ page, spec: url.pathname, status: response.status }).toEqual({
      page,
      spec: url.pathname,
      status: 200,
    });
    expect((await response.json()).openapi).toStartWith("3.1");
  }
});
