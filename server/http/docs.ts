/**
 * API docs: the OpenAPI 3.1 document at /swagger/json, built by @elysiajs/openapi from the routes'
 * TypeBox schemas when it is first asked for (the generator is a 260 KB module a server start need not
 * load: docs/benchmarks.md, "Cold start"), and Swagger UI at /swagger. Swagger UI's assets come from the swagger-ui-dist
 * package and are served here (embedded in a compiled binary), so the page works offline instead of
 * loading them from a CDN. Request bodies are documented with the one type each route takes (bodies.ts):
 * the generator would list JSON, urlencoded and multipart for every body.
 *
 * The page is this file's, not the plugin's: the plugin writes its start-up code inline, and the page
 * carries a strict Content-Security-Policy (SWAGGER_CSP) that allows no inline script. The page is where
 * "Try it out" sends requests with the browser's cookie, so a script injected into it (through a
 * document field, a compromised asset) must find nothing to load, nowhere else to send, and no site may
 * frame it.
 */
import { type AnyElysia, Elysia } from "elysia";
import cssPath from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import bundlePath from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import { APP_NAME, APP_VERSION } from "../version.ts";
import type { RoutePolicies } from "./route-policy.ts";

const ASSETS = "/swagger/assets";

function asset(path: string, contentType: string) {
  return () =>
    new Response(Bun.file(path), {
      headers: { "content-type": contentType, "cache-control": "public, max-age=86400" },
    });
}

/**
 * The page's policy: Swagger UI's bundle, its start-up script and stylesheet from this server only,
 * images from here or `data:` (the stylesheet's icons), requests ("Try it out", the document) to this
 * origin only, no inline script or style element, no eval, nothing framed, no plugins, no `<base>`, no
 * form posts. Chromium renders the page and runs "Try it out" under it without a single violation
 * (tests/e2e/swagger-try-it.test.ts).
 */
export const SWAGGER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join("; ");

/**
 * Swagger UI's options. The document is named by an absolute URL, so the page finds it whether it is
 * opened as /swagger or /swagger/.
 */
const SWAGGER_UI = { dom_id: "#swagger-ui", url: "/swagger/json" };

const DESCRIPTION =
  "A local-first agent server: four API families (chat, turns, search, agents) in one process. Each family follows the API of the system it was modelled on; docs/ in the repository explains behaviour, modes and configuration.";

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>${APP_NAME}</title>
  <meta name="description" content="${DESCRIPTION}" />
  <link rel="stylesheet" href="${ASSETS}/swagger-ui.css" />
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${ASSETS}/swagger-ui-bundle.js"></script>
  <script src="${ASSETS}/start.js"></script>
</body>
</html>
`;

const START = `window.ui = SwaggerUIBundle(${JSON.stringify(SWAGGER_UI)});\n`;

const page = () =>
  new Response(PAGE, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": SWAGGER_CSP,
      "x-content-type-options": "nosniff",
      "cache-control": "no-cache",
    },
  });

type Parameter = { example?: unknown; schema?: { examples?: unknown[] } };
type Operation = { requestBody?: { content?: Record<string, unknown> }; parameters?: Parameter[] };
type Document = { paths?: Record<string, Record<string, Operation>> };

/** Keeps, per operation, only the body type the route takes. */
function documentBodyTypes(document: Document, policies: RoutePolicies): void {
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      const content = operation.requestBody?.content;
      if (!content) continue;
      // The document writes parameters `{id}`; a route's `:id` matches any one segment.
      const multipart = policies.bodies(method.toUpperCase(), path) === "json+multipart";
      const type = multipart ? "multipart/form-data" : "application/json";
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

/** The OpenAPI version the document declares (the generator's own default). */
const OPENAPI_VERSION = "3.1.2";

/**
 * The document of every route of `app` that is not hidden, as @elysiajs/openapi's plugin writes it (the
 * same fields in the same order), with each body's one type and the parameters' examples.
 */
async function buildDocument(
  app: AnyElysia,
  tags: { name: string; description: string }[],
  policies: RoutePolicies,
): Promise<Document> {
  const { toOpenAPISchema } = await import("@elysiajs/openapi");
  const { paths, components } = toOpenAPISchema(app, undefined, undefined, undefined, OPENAPI_VERSION);
  const document = {
    info: { title: APP_NAME, description: DESCRIPTION, version: APP_VERSION },
    tags,
    openapi: OPENAPI_VERSION,
    paths,
    components: { schemas: components.schemas },
  };
  documentBodyTypes(document as Document, policies);
  documentParameterExamples(document as Document);
  return document as Document;
}

/**
 * `tags`: one per family, in the order the families are mounted; `root`: the app whose routes the
 * document lists (built once, on the first request: routes never change once the server is composed).
 */
export function docs(
  tags: { name: string; description: string }[],
  policies: RoutePolicies,
  root: () => AnyElysia,
) {
  let document: Promise<Document> | undefined;
  return new Elysia({ name: "atrium/docs" })
    .get(`${ASSETS}/swagger-ui-bundle.js`, asset(bundlePath, "text/javascript; charset=utf-8"), {
      detail: { hide: true },
    })
    .get(`${ASSETS}/swagger-ui.css`, asset(cssPath, "text/css; charset=utf-8"), { detail: { hide: true } })
    .get(
      `${ASSETS}/start.js`,
      () => new Response(START, { headers: { "content-type": "text/javascript; charset=utf-8" } }),
      { detail: { hide: true } },
    )
    .get("/swagger", page, { detail: { hide: true } })
    .get(
      "/swagger/json",
      () => {
        document ??= buildDocument(root(), tags, policies).catch((error) => {
          document = undefined;
          throw error;
        });
        return document;
      },
      { detail: { hide: true } },
    );
}
