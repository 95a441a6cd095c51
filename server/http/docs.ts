/**
 * API docs: the OpenAPI 3.1 document at /swagger/json and Swagger UI at /swagger, built by
 * @elysiajs/openapi from the routes' TypeBox schemas. Swagger UI's assets come from the swagger-ui-dist
 * package and are served here (embedded in a compiled binary), so the page works offline instead of
 * loading them from a CDN. Request bodies are documented with the one type each route takes (bodies.ts):
 * the generator would list JSON, urlencoded and multipart for every body.
 */
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import cssPath from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import bundlePath from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import { APP_NAME, APP_VERSION } from "../version.ts";
import type { UploadRoutes } from "./bodies.ts";

const ASSETS = "/swagger/assets";

function asset(path: string, contentType: string) {
  return () =>
    new Response(Bun.file(path), {
      headers: { "content-type": contentType, "cache-control": "public, max-age=86400" },
    });
}

/**
 * Swagger UI's options. The plugin names the document relative to the page ("swagger/json"), which
 * resolves to /swagger/swagger/json when the page is opened as /swagger/; an absolute URL works from
 * both. The plugin's type leaves `url` out, but it spreads these options over its own, so it applies.
 */
const SWAGGER_UI = {
  url: "/swagger/json",
  cdn: `${ASSETS}/swagger-ui-bundle.js`,
  theme: `${ASSETS}/swagger-ui.css`,
  autoDarkMode: false,
};

type Parameter = { example?: unknown; schema?: { examples?: unknown[] } };
type Operation = { requestBody?: { content?: Record<string, unknown> }; parameters?: Parameter[] };
type Document = { paths?: Record<string, Record<string, Operation>> };

/** Keeps, per operation, only the body type the route takes. Idempotent: the document is cached. */
function documentBodyTypes(document: Document, uploads: UploadRoutes): void {
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      const content = operation.requestBody?.content;
      if (!content) continue;
      const type = uploads.has(method.toUpperCase(), path) ? "multipart/form-data" : "application/json";
      for (const key of Object.keys(content)) if (key !== type) delete content[key];
    }
  }
}

/**
 * Gives each parameter its schema's first example as the parameter's own `example`, the value Swagger UI
 * fills the field with, so "Try it out" sends a required header (Idempotency-Key) without typing.
 */
function documentParameterExamples(document: Document): void {
  for (const operations of Object.values(document.paths ?? {}))
    for (const operation of Object.values(operations))
      for (const parameter of operation.parameters ?? []) {
        const first = parameter.schema?.examples?.[0];
        if (parameter.example === undefined && first !== undefined) parameter.example = first;
      }
}

/** `tags`: one per family, in the order the families are mounted. */
export function docs(tags: { name: string; description: string }[], uploads: UploadRoutes) {
  return new Elysia({ name: "atrium/docs" })
    .onAfterHandle(({ path, response }) => {
      if (path === "/swagger/json" && typeof response === "object" && response !== null) {
        documentBodyTypes(response as Document, uploads);
        documentParameterExamples(response as Document);
      }
    })
    .get(`${ASSETS}/swagger-ui-bundle.js`, asset(bundlePath, "text/javascript; charset=utf-8"), {
      detail: { hide: true },
    })
    .get(`${ASSETS}/swagger-ui.css`, asset(cssPath, "text/css; charset=utf-8"), { detail: { hide: true } })
    .use(
      openapi({
        path: "/swagger",
        provider: "swagger-ui",
        documentation: {
          info: {
            title: APP_NAME,
            version: APP_VERSION,
            description:
              "A local-first agent server: four API families (chat, turns, search, agents) in one process. Each family follows the API of the system it was modelled on; docs/ in the repository explains behaviour, modes and configuration.",
          },
          tags,
        },
        swagger: SWAGGER_UI,
      }),
    );
}
