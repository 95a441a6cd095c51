/**
 * Request bodies: which types a route takes, and limits on the JSON it parses. Both run before
 * validation and before any handler.
 *
 * - Types, checked on the request before routing: a body sent with POST, PUT, PATCH or DELETE must be
 *   `application/json`; routes declared `type: "multipart/form-data"` (uploads) also take multipart.
 *   Anything else is 415 in the family's envelope. Elysia would otherwise parse
 *   `application/x-www-form-urlencoded`, `multipart/form-data` and `text/plain` on every route: the
 *   types a cross-site page can send without a CORS preflight. Refused here, those parsers never run.
 * - JSON limits, checked on the parsed body (json-body.ts): an object at the top (every body of these
 *   APIs is one; Elysia would turn `1`, `"text"` or `[]` into `{}` while filling defaults), nesting
 *   depth, numbers a double holds exactly, no prototype keys.
 */
import { type AnyElysia, Elysia } from "elysia";
import { AppError } from "./errors.ts";
import { inspectJson } from "./json-body.ts";
import { pathOf } from "./path.ts";

const JSON_TYPE = "application/json";
const MULTIPART = "multipart/form-data";
const WITH_BODY = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const PREVIEW_PREFIX = "/api/sandbox/preview/";

/** The routes that take multipart uploads, learned from the composed app's declared body types. */
export class UploadRoutes {
  private readonly patterns: { method: string; segments: string[] }[] = [];

  learn(routes: AnyElysia["routes"]): void {
    for (const route of routes) {
      if ((route.hooks as { type?: string }).type !== MULTIPART) continue;
      this.patterns.push({ method: route.method, segments: route.path.split("/") });
    }
  }

  /** Whether METHOD path is one of them (`:param` segments match any one segment). */
  has(method: string, path: string): boolean {
    const segments = path.split("/");
    return this.patterns.some(
      (p) =>
        p.method === method &&
        p.segments.length === segments.length &&
        p.segments.every((s, i) => s === segments[i] || (s.startsWith(":") && segments[i] !== "")),
    );
  }
}

export function requestBodies(uploads: UploadRoutes) {
  return new Elysia({ name: "atrium/bodies" })
    .onRequest(({ request }) => {
      if (!WITH_BODY.has(request.method)) return;
      // A signed preview URL forwards any body to the user's own sandbox (its forms, its uploads).
      if (pathOf(request).startsWith(PREVIEW_PREFIX)) return;
      const header = request.headers.get("content-type");
      const type = header === null ? "" : (header.split(";")[0] as string).trim().toLowerCase();
      if (type === JSON_TYPE) return;
      // No type and no body: nothing to parse (a POST that only names an action).
      if (type === "" && request.body === null) return;
      const upload = uploads.has(request.method, pathOf(request));
      if (type === MULTIPART && upload) return;
      const got = type === "" ? "no Content-Type" : `'${type.slice(0, 100)}'`;
      throw new AppError(
        "invalid",
        `This route takes a body of type ${upload ? MULTIPART : JSON_TYPE}; got ${got}`,
        { status: 415, code: "unsupported_media_type" },
      );
    })
    .onTransform({ as: "global" }, ({ body }) => {
      if (body === undefined) return;
      const issue = inspectJson(body);
      if (issue) {
        throw new AppError("invalid", `Invalid request: ${issue.loc.join(".")}: ${issue.msg}`, {
          issues: [issue],
        });
      }
    });
}
