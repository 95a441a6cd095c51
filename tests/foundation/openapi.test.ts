/** The OpenAPI document and Swagger UI at /swagger, served offline. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { createTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
let doc: {
  openapi: string;
  info: { title: string; version: string };
  tags: { name: string }[];
  paths: Record<
    string,
    Record<string, { summary?: string; tags?: string[]; responses?: Record<string, { content?: unknown }> }>
  >;
};

beforeAll(async () => {
  t = await createTestApp();
  const response = await t.request("/swagger/json");
  expect(response.status).toBe(200);
  doc = await response.json();
});
afterAll(() => t.close());

test("the document is valid OpenAPI 3.1", async () => {
  const result = await new Validator().validate(structuredClone(doc));
  expect(result.errors).toBeUndefined();
  expect(result.valid).toBe(true);
  expect(doc.openapi).toStartWith("3.1");
});

test("titled Atrium at the app version, one tag per family, the MCP server's and the OpenAI-compatible endpoint's", async () => {
  const pkg = await Bun.file(new URL("../../package.json", import.meta.url)).json();
  expect(doc.info.title).toBe("Atrium");
  expect(doc.info.version).toBe(pkg.version);
  expect(doc.tags.map((tag) => tag.name)).toEqual(["chat", "turns", "search", "agents", "mcp", "openai"]);
});

test("every documented route has a summary, a family tag and a response schema", () => {
  const families = new Set(doc.tags.map((tag) => tag.name));
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })),
  );
  expect(operations.map((o) => o.route)).toEqual(
    expect.arrayContaining(["GET /health", "GET /health/ready", "GET /api/health", "GET /"]),
  );
  for (const { route, op } of operations) {
    expect({ route, summary: typeof op.summary }).toEqual({ route, summary: "string" });
    expect({ route, tagged: op.tags?.every((tag) => families.has(tag)) && op.tags.length === 1 }).toEqual({
      route,
      tagged: true,
    });
    const ok = op.responses?.["200"];
    expect({ route, schema: Boolean(ok?.content) }).toEqual({ route, schema: true });
  }
  // Internal routes (UI, docs assets) stay out of the document.
  expect(Object.keys(doc.paths).some((p) => p.startsWith("/app") || p.startsWith("/swagger"))).toBe(false);
});

test("an integer of a body or a response is documented as an integer; only query parameters take its text", () => {
  // Elysia's t.Integer admits "5" too (a query string is text) and is documented as a string or an integer.
  const textual = (value: unknown) => (JSON.stringify(value ?? {}).match(/"format":"integer"/g) ?? []).length;
  const where: string[] = [];
  let parameters = 0;
  for (const [path, methods] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(methods) as [string, Record<string, unknown>][]) {
      if (textual(op.requestBody) > 0) where.push(`${method} ${path} body`);
      if (textual(op.responses) > 0) where.push(`${method} ${path} responses`);
      for (const p of (op.parameters ?? []) as { in: string; name: string }[])
        if (textual(p) > 0) {
          expect({ path, parameter: p.name, in: p.in }).toEqual({ path, parameter: p.name, in: "query" });
          parameters++;
        }
    }
  expect(where).toEqual([]);
  // The paging parameters of list routes keep it: that is what lets `?limit=5` pass.
  expect(parameters).toBeGreaterThan(10);
});

test("Swagger UI loads only assets this server serves (works offline)", async () => {
  const page = await t.request("/swagger");
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).not.toMatch(/(src|href)="https?:/);
  const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? "");
  expect(assets).toEqual([
    "/swagger/assets/swagger-ui.css",
    "/swagger/assets/swagger-ui-bundle.js",
    "/swagger/assets/start.js",
  ]);
  for (const asset of assets.slice(0, 2)) {
    const response = await t.request(asset);
    expect({ asset, status: response.status }).toEqual({ asset, status: 200 });
    expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
  }
  // Absolute, so the page opened as /swagger/ finds it too (openapi-examples.test.ts).
  expect(await (await t.request("/swagger/assets/start.js")).text()).toContain('"url":"/swagger/json"');
});

test("the page has a strict Content-Security-Policy: no inline script, nothing from elsewhere, never framed", async () => {
  for (const path of ["/swagger", "/swagger/"]) {
    const page = await t.request(path);
    const policy = page.headers.get("content-security-policy") ?? "";
    const directives = Object.fromEntries(
      policy.split(";").map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name, values.join(" ")];
      }),
    );
    expect(directives).toMatchObject({
      "default-src": "'none'",
      "script-src": "'self'",
      "style-src": "'self'",
      "connect-src": "'self'",
      "frame-ancestors": "'none'",
      "object-src": "'none'",
      "base-uri": "'none'",
    });
    // What the policy forbids, the page does not need: no inline script or style element, no handler.
    const html = await page.text();
    expect(html).not.toMatch(/<script>|<style|\son\w+=|style="/);
  }
});
